// First load of the chat page in Chromium: the bytes the browser fetched and the time
// until the composer takes input, for each web build given, beside the same browser
// loading the server's plain /healthz (the floor) in the same run.
//   node e2e/first-load.mjs dist [other-dist ...]     (after `make build`)
// LENS_LOAD_PLAIN=1 measures the files sent uncompressed.
// Each build is served by the real release `lens` on a fresh data directory; every load
// is a fresh browser context, so nothing comes from the cache.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, request } from '@playwright/test';

const ROUNDS = Number(process.env.LENS_BENCH_LOADS ?? 9);
const root = resolve(new URL('..', import.meta.url).pathname);

const freePort = () => new Promise((ok) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => ok(port)); });
});
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function serve(dist) {
  const port = await freePort();
  const data = mkdtempSync(join(tmpdir(), 'lens-load-'));
  const lens = spawn(join(root, 'target/release/lens'), ['serve', '--addr', `127.0.0.1:${port}`, '--data-dir', data,
    '--web-dist', resolve(root, dist)], { stdio: 'ignore', env: { ...process.env, LENS_LOG: 'warn' } });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try { if ((await fetch(`${base}/healthz`)).ok) break; } catch { /* not yet */ }
    if (i > 300) throw new Error('lens did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  const api = await request.newContext({ baseURL: base });
  const made = await api.post('/api/v1/setup', { data: { username: 'bench', password: 'bench-password-1' } });
  if (!made.ok()) throw new Error(`setup: ${made.status()}`);
  const state = await api.storageState();
  await api.dispose();
  return { base, state, stop: () => { lens.kill('SIGTERM'); setTimeout(() => rmSync(data, { recursive: true, force: true }), 500); } };
}

// One cold load: ms from navigation start to an enabled composer, and bytes fetched.
// LENS_LOAD_PLAIN=1 asks for no compression, as the server before gzip sent the files.
const headers = process.env.LENS_LOAD_PLAIN ? { 'accept-encoding': 'identity' } : {};
async function load(browser, base, state, path) {
  const context = await browser.newContext({ baseURL: base, storageState: state, extraHTTPHeaders: headers });
  const page = await context.newPage();
  await page.goto(path, { waitUntil: 'commit' });
  let ms;
  if (path === '/healthz') {
    await page.waitForLoadState('load');
    ms = await page.evaluate(() => performance.getEntriesByType('navigation')[0].loadEventEnd);
  } else {
    const ready = await page.waitForFunction(() => {
      const el = document.querySelector('[data-testid=composer-input]');
      return el && !el.disabled && document.querySelector('nav.chat-list') ? performance.now() : false;
    }, null, { polling: 'raf', timeout: 60_000 });
    ms = await ready.jsonValue();
  }
  const bytes = await page.evaluate(() => [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
    .filter((e) => !e.name.includes('/api/'))
    .reduce((n, e) => n + e.transferSize, 0));
  await context.close();
  return { ms, bytes };
}

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  for (const dist of process.argv.slice(2)) {
    const server = await serve(dist);
    try {
      await load(browser, server.base, server.state, '/chat'); // warms the server's disk cache, not the browser's
      const floor = [], chat = [], bytes = [];
      for (let i = 0; i < ROUNDS; i++) {
        floor.push((await load(browser, server.base, server.state, '/healthz')).ms);
        const r = await load(browser, server.base, server.state, '/chat');
        chat.push(r.ms); bytes.push(r.bytes);
      }
      console.log(`  ${dist}: first load ${(p50(bytes) / 1000).toFixed(1)} KB fetched (page, script, wasm, styles); `
        + `interactive chat page p50 ${p50(chat).toFixed(0)} ms of ${ROUNDS} cold loads `
        + `(a plain /healthz page from the same server: ${p50(floor).toFixed(0)} ms, ${(p50(chat) / p50(floor)).toFixed(1)}x)`);
    } finally {
      server.stop();
    }
  }
} finally {
  await browser.close();
}
