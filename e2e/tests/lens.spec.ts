// Lens in real Chromium against the real release server: setup, login, chat, a Direct
// answer, reload, Stop, the settings, and another person's chat staying private.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, test, expect } from '@playwright/test';
import { OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_ISSUER } from '../oidc';
import { AuthPage, ChatPage, LibraryPage, WorkspaceFiles, distanceToEnd, settledText, tallCode } from './pages';

const MODEL_PORT = process.env.LENS_E2E_MODEL_PORT ?? '8182';
const ADMIN = { name: 'admin', password: 'admin-password-1' };
const BOB = { name: 'bob', password: 'bob-password-1' };

test.describe.configure({ mode: 'serial' });

let adminChat = '';

test('the first visitor sets up the admin account', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // The page runs under a policy that allows only Lens's own script, wasm and styles.
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) errors.push(m.text());
  });
  const shell = await page.goto('/');
  expect(shell?.headers()['content-security-policy']).toContain("script-src 'self' 'wasm-unsafe-eval' 'sha256-");
  await expect(page).toHaveURL(/\/setup$/);
  await page.getByTestId('username').fill(ADMIN.name);
  await page.getByTestId('password').fill(ADMIN.password);
  await page.getByTestId('password-again').fill('something-else');
  await page.getByTestId('submit').click();
  await expect(page.getByTestId('form-error')).toHaveText('The two passwords differ.');
  await new AuthPage(page).fill(ADMIN.name, ADMIN.password, true);
  await expect(page).toHaveURL(/\/chat$/);
  await expect(page.getByTestId('composer-input')).toBeVisible();
  expect(errors).toEqual([]);
});

test('a wrong password is refused clearly, the right one logs in', async ({ page }) => {
  const auth = new AuthPage(page);
  await page.goto('/login');
  await auth.fill(ADMIN.name, 'not-the-password');
  await expect(page.getByTestId('form-error')).toHaveText('wrong username or password');
  await auth.fill(ADMIN.name, ADMIN.password);
  await expect(page).toHaveURL(/\/chat$/);
});

test('a Direct answer streams, and a reload shows the same saved answer', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await chat.send('Hello <b>there</b>');
  await expect(page).toHaveURL(/\/chat\/[a-z0-9]+$/);
  adminChat = chat.chatId();
  await expect(page.getByTestId('user-message')).toHaveText(/Hello <b>there<\/b>/);
  const answer = chat.lastAnswer();
  await expect(answer).toHaveAttribute('data-status', 'complete');
  await expect(answer).toContainText('No language model is configured');
  await expect(answer.locator('strong')).toHaveText('Settings → Model');
  const before = await answer.innerText();
  await expect(page.getByTestId('chat-link').first()).toHaveText('Hello <b>there</b>');

  await page.reload();
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
  expect(await chat.lastAnswer().innerText()).toBe(before);
});

test('every page is a route: by link, by address, back and forward, and an unknown address', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const link = page.getByTestId('chat-link').first();
  await link.click();
  await expect(page).toHaveURL(new RegExp(`/chat/${adminChat}$`));
  await expect(page.getByTestId('chat-title')).toHaveText('Hello <b>there</b>');
  await expect(link).toHaveAttribute('aria-current', 'page');
  await page.getByTestId('settings-link').click();
  await expect(page).toHaveURL(/\/settings\/account$/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Settings');
  // Each section is its own address, named in the side list.
  await page.getByTestId('settings-nav-sandbox').click();
  await expect(page).toHaveURL(/\/settings\/sandbox$/);
  await expect(page.getByTestId('settings-nav-sandbox')).toHaveAttribute('aria-current', 'page');
  await expect(page.getByRole('heading', { level: 2 })).toHaveText('Code sandbox');
  await page.goBack();
  await expect(page.getByTestId('account-name')).toBeVisible();
  await page.getByTestId('back-to-chat').click();
  await expect(page).toHaveURL(/\/chat$/);
  await page.getByTestId('library-link').click();
  await expect(page).toHaveURL(/\/library$/);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();

  await page.goBack();
  await expect(page).toHaveURL(/\/chat$/);
  await page.goBack();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Settings');
  await page.goBack();
  await expect(page.getByTestId('chat-title')).toHaveText('Hello <b>there</b>');
  await page.goForward();
  await expect(page).toHaveURL(/\/settings\/account$/);

  for (const [address, shown] of [
    [`/chat/${adminChat}`, page.getByTestId('chat-title')],
    ['/settings', page.getByTestId('account-name')],
    ['/settings/usage', page.getByTestId('usage')],
    ['/library', page.getByTestId('library-link')],
  ] as const) {
    await page.goto(address);
    await expect(shown.first()).toBeVisible();
  }
  await page.goto('/settings/nonsense');
  await expect(page.getByTestId('settings-unknown')).toBeVisible();
  await page.goto('/no/such/page');
  await expect(page.getByTestId('not-found')).toContainText('This page does not exist.');
  await page.getByRole('link', { name: 'Go to your chats' }).click();
  await expect(page).toHaveURL(/\/chat$/);
  await expect(page.getByTestId('composer-input')).toBeVisible();
});

test('Stop ends a running answer and keeps what was written', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await chat.withScriptedModel(MODEL_PORT, async () => {
    await page.goto('/chat');
    await chat.send('Count slowly');
    const answer = chat.lastAnswer();
    await expect(answer).toHaveAttribute('data-status', 'streaming');
    await expect(answer).toContainText('word3');
    await expect(page.getByTestId('answer-streaming')).toBeVisible();
    // The text grows while we watch: it streams.
    await expect(answer).toContainText('word6');
    await page.getByTestId('stop').click();
    await expect(answer).toHaveAttribute('data-status', 'stopped');
    await expect(page.getByTestId('answer-ending')).toHaveText('Stopped.');
    await expect(page.getByTestId('send')).toBeVisible();
    const kept = await settledText(answer.locator('.markdown'));
    expect(kept).toContain('word6');
    expect(kept).not.toContain('word200');

    await page.reload();
    await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'stopped');
    expect(await chat.lastAnswer().locator('.markdown').innerText()).toBe(kept);
  });
});

test('a dropped page resumes the running answer where it was', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await chat.withScriptedModel(MODEL_PORT, async () => {
    await page.goto('/chat');
    await chat.send('Count again');
    await expect(chat.lastAnswer()).toContainText('word2');
    // Leave and come back while it runs: the answer went on without us.
    await page.goto('/settings');
    await page.waitForTimeout(1000);
    await page.goBack();
    await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'streaming');
    await expect(chat.lastAnswer()).toContainText('word12');
    await page.getByTestId('stop').click();
    await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'stopped');
  });
});

test('a dropped connection resumes the stream without repeating text', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await chat.withScriptedModel(MODEL_PORT, async () => {
    await page.goto('/chat');
    const followed: Promise<string>[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/events')) followed.push(r.allHeaders().then((h) => h['last-event-id'] ?? ''));
    });
    await chat.send('Count once more');
    const answer = chat.lastAnswer();
    // The server ends each response after a second (LENS_SSE_MAX_SECS=1): the browser
    // reconnects by itself with Last-Event-ID and gets only what it missed.
    await expect(answer).toContainText('word25', { timeout: 20_000 });
    const ids = await Promise.all(followed);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(ids[0]).toBe('');
    expect(Number(ids[ids.length - 1])).toBeGreaterThan(1);
    const words = (await answer.locator('.markdown').innerText()).trim().split(/\s+/);
    expect(words.slice(0, 25)).toEqual(Array.from({ length: 25 }, (_, i) => `word${i + 1}`));
    await page.getByTestId('stop').click();
    await expect(answer).toHaveAttribute('data-status', 'stopped');
  });
});

test('Direct mode runs code blocks: folded runs with output, errors in red, names kept', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  await chat.send('```python\nanswer = 6 * 7\nprint(answer)\n```');
  const answer = chat.lastAnswer();
  await expect(answer).toHaveAttribute('data-status', 'complete');
  const step = answer.getByTestId('tool-step');
  await expect(step).toHaveAttribute('data-status', 'succeeded');
  await expect(step.getByTestId('tool-step-summary')).toHaveText('Run Python: answer = 6 * 7…');
  await expect(step.getByTestId('run-stdout')).toBeHidden();
  await step.locator('summary').click();
  await expect(step.getByTestId('tool-step-input')).toHaveText('answer = 6 * 7\nprint(answer)');
  await expect(step.getByTestId('run-stdout')).toHaveText('42');
  await expect(step.getByTestId('run-ending')).toHaveText('exited normally');
  // The folded step says what its output took of the model's context.
  await expect(step.getByTestId('step-context')).toHaveText(/^about \d+ tokens of the model's context \(under 1%\)$/);

  // The kernel keeps names between messages; a failing run shows red stderr and its code.
  await chat.send('```python\nprint(answer + 1)\nraise ValueError("bad input")\n```');
  const failed = chat.lastAnswer().getByTestId('tool-step');
  await expect(failed).toHaveAttribute('data-status', 'failed');
  await failed.locator('summary').click();
  await expect(failed.getByTestId('run-stdout')).toHaveText('43');
  await expect(failed.getByTestId('run-stderr')).toContainText('ValueError: bad input');
  await expect(failed.getByTestId('run-stderr')).toHaveCSS('color', /rgb\((179, 38, 30|255, 138, 128)\)/);
  await expect(failed.getByTestId('run-ending')).toHaveText('exited with code 1');

  // A reload shows the same runs.
  await page.reload();
  await expect(page.getByTestId('tool-step')).toHaveCount(2);
  await expect(page.getByTestId('tool-step').nth(1)).toHaveAttribute('data-status', 'failed');
});

test('a run whose output was cut for the model says so, and how much of the context it took', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  await chat.send('```python\nprint("x" * 100000)\n```');
  const step = chat.lastAnswer().getByTestId('tool-step');
  await expect(step).toHaveAttribute('data-status', 'succeeded');
  const used = step.getByTestId('step-context');
  await expect(used).toHaveText(/^about \d\.\dk tokens of the model's context \(\d+%\), cut to fit$/);
  await expect(used).toHaveAttribute('data-cut', 'true');
  // Folded, it is in the line a screen reader reads for the step.
  await expect(step.locator('summary')).toContainText('cut to fit');
  await page.reload();
  await expect(chat.lastAnswer().getByTestId('step-context')).toContainText('cut to fit');
});

test('the chat header shows how the sandbox stands; Delete, after saying what is lost, takes its files', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  await chat.send('```bash\nhead -c 200000 /dev/urandom > kept.bin && echo made\n```');
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
  const status = page.getByTestId('sandbox-status');
  await expect(status).toHaveAttribute('data-state', 'running');
  await expect(status).toContainText('Sandbox: running');
  await expect(page.getByTestId('sandbox-details')).toHaveText(/^\d+(\.\d)? (KB|MB) of files · deleted on \d{4}-\d\d-\d\d if unused$/);

  // Dismissed: nothing goes.
  let asked = '';
  page.once('dialog', (d) => { asked = d.message(); void d.dismiss(); });
  await page.getByTestId('delete-sandbox').click();
  await expect.poll(() => asked).toContain('Every file in it and every name Python holds are lost');
  await expect(status).toHaveAttribute('data-state', 'running');
  // Confirmed, by keyboard: it goes, and the conversation stays.
  page.once('dialog', (d) => void d.accept());
  await page.getByTestId('delete-sandbox').focus();
  await page.keyboard.press('Enter');
  await expect(status).toHaveAttribute('data-state', 'absent');
  await expect(status).toContainText('none yet');
  await expect(page.getByTestId('delete-sandbox')).toHaveCount(0);
  await chat.send('```bash\ntest -e kept.bin || echo gone\n```');
  await expect(chat.lastAnswer().getByTestId('tool-step')).toHaveAttribute('data-status', 'succeeded');
  await expect(status).toHaveAttribute('data-state', 'running');
  await page.reload();
  await expect(page.getByTestId('assistant-message')).toHaveCount(2);
  await expect(chat.lastAnswer().getByTestId('tool-step').locator('summary')).toBeVisible();
  await chat.lastAnswer().getByTestId('tool-step').locator('summary').click();
  await expect(chat.lastAnswer().getByTestId('run-stdout')).toHaveText('gone');
});

test('the workspace browser shows folders, sizes, dates and the run that made each file; Share gives the download', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  await chat.send('```bash\nmkdir -p out && printf "a,b\\n1,2\\n" > data.csv && head -c 3000 /dev/zero > out/z.bin && echo made\n```');
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
  const open = page.getByTestId('open-workspace');
  await expect(open).toHaveAttribute('aria-expanded', 'false');
  await open.focus();
  await page.keyboard.press('Enter');
  await expect(open).toHaveAttribute('aria-expanded', 'true');
  const files = page.getByTestId('workspace-files');
  const rows = files.getByTestId('workspace-entry');
  // The folder first, then the file, each a row a screen reader reads by its name.
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toHaveAttribute('data-kind', 'folder');
  const csv = files.getByRole('row', { name: /data\.csv/ });
  await expect(csv).toContainText('8 B');
  await expect(csv).toContainText(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
  await expect(csv.getByTestId('made-by')).toHaveText('run 1');
  // "run 1" leads to the step that made it.
  const anchor = await csv.getByTestId('made-by').getAttribute('href');
  await expect(page.locator(anchor!)).toHaveAttribute('data-testid', 'tool-step');

  // Into the folder by keyboard, and back by the trail.
  await files.getByRole('button', { name: 'Open folder out' }).focus();
  await page.keyboard.press('Enter');
  await expect(rows).toHaveCount(1);
  const bin = files.getByRole('row', { name: /z\.bin/ });
  await expect(bin).toContainText('3 KB');
  await bin.getByRole('button', { name: 'Share z.bin' }).click();
  const download = page.waitForEvent('download');
  await bin.getByTestId('file-chip').click();
  const saved = await (await download).path();
  expect(readFileSync(saved).length).toBe(3000);
  await files.getByTestId('workspace-crumb').first().click();
  await expect(rows).toHaveCount(2);

  // A new run's file shows up when its answer ends.
  await chat.send('```bash\necho hi > later.txt\n```');
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
  await expect(files.getByRole('row', { name: /later\.txt/ }).getByTestId('made-by')).toHaveText('run 2');

  // The whole workspace as one zip, and the conversation as a notebook.
  const zipping = page.waitForEvent('download');
  await files.getByRole('link', { name: 'Download the workspace as a zip' }).click();
  const zip = readFileSync(await (await zipping).path());
  expect(zip.subarray(0, 2).toString()).toBe('PK');
  expect(zip.includes(Buffer.from('out/z.bin'))).toBe(true);
  const exporting = page.waitForEvent('download');
  await page.getByRole('link', { name: 'Export this conversation as a Jupyter notebook' }).click();
  const exported = await exporting;
  expect(exported.suggestedFilename()).toMatch(/\.ipynb$/);
  const notebook = JSON.parse(readFileSync(await exported.path(), 'utf8'));
  expect(notebook.nbformat).toBe(4);
  const code = notebook.cells.filter((c: { cell_type: string }) => c.cell_type === 'code');
  expect(code.map((c: { source: string[] }) => c.source[0])).toEqual(['%%bash\n', '%%bash\n']);
});

test('a shared file opens beside its download: a sortable table with its count, and HTML whose script cannot reach Lens', async ({ page, baseURL }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  // The page's script tries what a hostile file would, and writes down what happened.
  const probe = [
    '<html><body><pre id="out">waiting</pre><script>',
    'const out = [];',
    'try { out.push("cookie: " + (document.cookie === "" ? "empty" : "READ " + document.cookie)); } catch (e) { out.push("cookie: blocked"); }',
    'const tries = [["relative", "/api/v1/me"], ["lens", "LENS/api/v1/me"]];',
    'Promise.all(tries.map(([n, u]) => fetch(u, { credentials: "include" })',
    '  .then((r) => r.ok ? r.text().then((t) => n + ": READ " + t.slice(0, 40)) : n + ": refused " + r.status)',
    '  .catch(() => n + ": failed")))',
    '  .then((rs) => { document.getElementById("out").textContent = out.concat(rs).join("; "); });',
    '</script></body></html>',
  ].join('\n').replace('LENS', baseURL!);
  const code = [
    '```python',
    'with open("big.csv", "w") as f:',
    '    f.write("n,label\\n")',
    '    for i in range(1500):',
    '        f.write(f"{i},item {i}\\n")',
    `open("probe.html", "w").write(${JSON.stringify(probe)})`,
    '```',
  ].join('\n');
  await chat.send(code);
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
  const files = new WorkspaceFiles(page);
  await files.open();
  for (const name of ['big.csv', 'probe.html']) await files.share(name);

  // The table: the first thousand rows, then the count of all; sorted by a column.
  const csvRow = await files.togglePreview('big.csv');
  const preview = csvRow.getByRole('region', { name: 'Preview of big.csv' });
  const table = preview.getByTestId('preview-table');
  await expect(table.locator('tbody tr')).toHaveCount(1000);
  await expect(preview.getByTestId('row-count')).toHaveText('1,500 rows; the first 1,000 are shown');
  const n = table.getByRole('columnheader', { name: 'n' });
  await n.getByRole('button').click();
  await expect(n).toHaveAttribute('aria-sort', 'ascending');
  await n.getByRole('button').click();
  await expect(n).toHaveAttribute('aria-sort', 'descending');
  await expect(table.locator('tbody tr').first()).toHaveText('999item 999');
  await files.togglePreview('big.csv');
  await expect(preview).toHaveCount(0);

  // HTML: its script runs, in a frame from the other origin, and can reach nothing of Lens.
  const htmlRow = await files.togglePreview('probe.html');
  const frame = htmlRow.getByTestId('preview-frame');
  await expect(frame).toHaveAttribute('sandbox', 'allow-scripts');
  const src = await frame.getAttribute('src');
  expect(new URL(src!).origin).not.toBe(new URL(baseURL!).origin);
  const out = htmlRow.frameLocator('[data-testid=preview-frame]').locator('#out');
  await expect(out).toHaveText(/^cookie: blocked; relative: (failed|refused 404); lens: failed$/);
  // Lens's own page still works after it.
  await chat.send('```bash\necho after\n```');
  await expect(chat.lastAnswer().getByTestId('tool-step')).toHaveAttribute('data-status', 'succeeded');
});

test('a PDF a run made opens in the browser\'s own viewer, page by page, from the preview origin', async ({ page, baseURL }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  // Two pages, each a black rectangle, written byte by byte as a PDF is.
  const code = [
    '```python',
    'page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>"',
    'objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>", page,',
    '        b"<< /Length 27 >>\\nstream\\n0 0 0 rg 50 50 500 700 re f\\nendstream", page]',
    'out, offsets = b"%PDF-1.4\\n", []',
    'for i, o in enumerate(objs, 1):',
    '    offsets.append(len(out))',
    '    out += b"%d 0 obj\\n" % i + o + b"\\nendobj\\n"',
    'xref = len(out)',
    'out += b"xref\\n0 6\\n0000000000 65535 f \\n" + b"".join(b"%010d 00000 n \\n" % o for o in offsets)',
    'out += b"trailer\\n<< /Size 6 /Root 1 0 R >>\\nstartxref\\n%d\\n%%%%EOF\\n" % xref',
    'open("pages.pdf", "wb").write(out)',
    '```',
  ].join('\n');
  await chat.send(code);
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
  const files = new WorkspaceFiles(page);
  await files.open();
  await files.share('pages.pdf');
  const row = await files.togglePreview('pages.pdf');
  const frame = row.getByTestId('preview-frame');
  await expect(frame).toBeVisible();
  // Not sandboxed (Chromium shows no PDF in a sandboxed frame), and from the other origin.
  expect(await frame.getAttribute('sandbox')).toBeNull();
  expect(new URL((await frame.getAttribute('src'))!).origin).not.toBe(new URL(baseURL!).origin);
  // Chromium's viewer took it, and shows both pages.
  const viewer = () => page.frames().find((f) => f.url().startsWith('chrome-extension://'));
  await expect.poll(() => viewer() !== undefined, { timeout: 30_000 }).toBe(true);
  await expect(viewer()!.locator('viewer-thumbnail')).toHaveCount(2, { timeout: 30_000 });
  await expect(viewer()!.locator('#pageSelector')).toHaveValue('1');
});

test('Plotly, Bokeh and Altair charts that load their libraries from CDNs draw in their previews', async ({ baseURL }) => {
  // The charts as a person's run would write them; each CDN's host name is sent to a local
  // HTTPS server with the library's own copy (Plotly's and Bokeh's from their packages,
  // Vega from npm at the versions Altair names).
  const made = JSON.parse(execFileSync('../.tools/charts/bin/python', ['charts.py']).toString()) as {
    charts: Record<string, string>; files: Record<string, string>; npm: string[];
  };
  const served = new Map<string, Buffer>();
  for (const [url, file] of Object.entries(made.files)) served.set(url, readFileSync(file));
  for (const url of made.npm) {
    const [name, version] = new URL(url).pathname.replace('/npm/', '').split('@');
    const pkg = JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8'));
    expect(`${pkg.version}.`.startsWith(`${version}.`), `${name} ${pkg.version} is not the ${version} Altair names`).toBe(true);
    served.set(url, readFileSync(`node_modules/${name}/${pkg.jsdelivr}`));
  }
  const certs = mkdtempSync(join(tmpdir(), 'lens-e2e-cdn-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=cdn',
    '-keyout', join(certs, 'key.pem'), '-out', join(certs, 'cert.pem')], { stdio: 'ignore' });
  const asked = new Set<string>();
  const server = createHttpsServer({ key: readFileSync(join(certs, 'key.pem')), cert: readFileSync(join(certs, 'cert.pem')) },
    (req, res) => {
      const url = `https://${req.headers.host}${req.url}`;
      const body = served.get(url);
      if (body) asked.add(url);
      // As a CDN answers: a page that checks a file's integrity asks with `crossorigin`.
      res.writeHead(body ? 200 : 404, { 'content-type': 'text/javascript', 'access-control-allow-origin': '*' });
      res.end(body ?? '');
    });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const hosts = [...new Set([...served.keys()].map((u) => new URL(u).hostname))];
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--no-proxy-server', '--ignore-certificate-errors',
      `--host-resolver-rules=${hosts.map((h) => `MAP ${h} 127.0.0.1:${port}`).join(', ')}`],
  });
  try {
    const page = await (await browser.newContext({ baseURL })).newPage();
    await new AuthPage(page).login(ADMIN.name, ADMIN.password);
    const chat = new ChatPage(page);
    await page.goto('/chat');
    const writes = Object.entries(made.charts).map(([name, html]) => `open(${JSON.stringify(name)}, "w").write(${JSON.stringify(html)})`);
    await chat.send(['```python', ...writes, '```'].join('\n'));
    await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
    const files = new WorkspaceFiles(page);
    await files.open();
    // What each library draws when it has run: Plotly an SVG with a group per bar, Bokeh
    // its canvas, Vega-Embed its view.
    const drawn: Record<string, string> = {
      'plotly.html': 'svg.main-svg g.point',
      'bokeh.html': 'canvas',
      'altair.html': '.vega-embed canvas, .vega-embed svg.marks',
    };
    for (const name of Object.keys(made.charts)) {
      await files.share(name);
      const row = await files.togglePreview(name);
      await expect(row.getByTestId('preview-frame')).toHaveAttribute('sandbox', 'allow-scripts');
      const chart = row.frameLocator('[data-testid=preview-frame]');
      await expect(chart.locator(drawn[name]).first(), `${name} drew`).toBeVisible({ timeout: 30_000 });
      await files.togglePreview(name);
    }
    await expect.poll(() => asked.size).toBe(served.size);
  } finally {
    await browser.close();
    server.close();
    rmSync(certs, { recursive: true, force: true });
  }
});

test('Fork from here opens a new conversation with the history and the files, and says Python starts fresh', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  await chat.send('```python\nx = 5\nopen("data.txt", "w").write("kept")\nprint(x)\n```');
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
  const original = page.url();
  await chat.send('```bash\necho second\n```');
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
  // Forked after the first answer, by keyboard.
  await page.getByTestId('assistant-message').first().getByRole('button', { name: /^Fork the conversation from this answer/ }).focus();
  await page.keyboard.press('Enter');
  await expect(page).not.toHaveURL(original);
  await expect(page.getByTestId('chat-title')).toHaveText(/^Fork of /);
  await expect(page.getByTestId('fork-note')).toContainText('names Python held were not');
  await expect(page.getByTestId('assistant-message')).toHaveCount(1);
  await chat.send('```bash\ncat data.txt\n```');
  const step = chat.lastAnswer().getByTestId('tool-step');
  await expect(step).toHaveAttribute('data-status', 'succeeded');
  await step.locator('summary').click();
  await expect(step.getByTestId('run-stdout')).toHaveText('kept');
  // The original is still there, both answers in it.
  await page.goto(original);
  await expect(page.getByTestId('assistant-message')).toHaveCount(2);
});

test('Edit and run again runs the edited code in the same Python as the person\'s own step; a reload keeps it', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  await chat.send('```python\nx = 20\nprint(x)\n```');
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
  const steps = chat.lastAnswer().getByTestId('tool-step');
  const first = steps.first();
  await first.locator('summary').click();
  await first.getByRole('button', { name: 'Edit and run again' }).click();
  const code = first.getByRole('textbox', { name: "Code to run in this conversation's sandbox" });
  await expect(code).toHaveValue('x = 20\nprint(x)');
  // Cancel leaves things as they were; the edit, by keyboard, runs.
  await first.getByRole('button', { name: 'Cancel' }).click();
  await expect(code).toHaveCount(0);
  await first.getByRole('button', { name: 'Edit and run again' }).click();
  await code.fill('for i in range(3):\n    print(x + i)');
  await first.getByRole('button', { name: 'Run' }).focus();
  await page.keyboard.press('Enter');
  await expect(steps).toHaveCount(2);
  const mine = steps.nth(1);
  await expect(mine).toHaveAttribute('data-status', 'succeeded');
  await expect(mine.getByTestId('step-by-person')).toHaveText('run by you, edited');
  await expect(mine.getByTestId('tool-step-summary')).toHaveText('Run Python: for i in range(3):…');
  await mine.locator('summary').click();
  await expect(mine.getByTestId('run-stdout')).toHaveText(/^20\s+21\s+22\s*$/);
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
  // A reload shows the same; the conversation goes on.
  await page.reload();
  await expect(chat.lastAnswer().getByTestId('tool-step')).toHaveCount(2);
  await expect(chat.lastAnswer().getByTestId('step-by-person')).toBeVisible();
  await chat.send('```python\nprint(x * 2)\n```');
  await expect(page.getByTestId('assistant-message')).toHaveCount(2);
  const next = chat.lastAnswer().getByTestId('tool-step');
  await expect(next).toHaveAttribute('data-status', 'succeeded');
  await next.locator('summary').click();
  await expect(next.getByTestId('run-stdout')).toHaveText('40');
});

test('Restart Python from the sandbox line forgets the names and keeps the files', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  await chat.send('```python\nx = 5\nopen("f.txt", "w").write("kept")\n```');
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
  let asked = '';
  page.once('dialog', (d) => { asked = d.message(); void d.accept(); });
  await page.getByRole('button', { name: 'Restart Python' }).click();
  await expect(page.getByTestId('python-restarted')).toBeVisible();
  expect(asked).toContain('names it holds are lost; the files stay');
  await chat.send('```python\nprint(open("f.txt").read())\nprint(x)\n```');
  const step = chat.lastAnswer().getByTestId('tool-step');
  await expect(step).toHaveAttribute('data-status', 'failed');
  await step.locator('summary').click();
  await expect(step.getByTestId('run-stdout')).toHaveText('kept');
  await expect(step.getByTestId('run-stderr')).toContainText("NameError: name 'x' is not defined");
});

test('Copy puts a step\'s code, its output and the answer\'s text on the clipboard', async ({ page }) => {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  await chat.send('```python\nfor w in ["copy", "me"]:\n    print(w)\n```');
  const answer = chat.lastAnswer();
  await expect(answer).toHaveAttribute('data-status', 'complete');
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
  const step = answer.getByTestId('tool-step');
  await step.locator('summary').click();
  await step.getByRole('button', { name: 'Copy the code' }).click();
  await expect(step.getByTestId('copy-code')).toHaveText('Copied');
  expect(await clipboard()).toBe('for w in ["copy", "me"]:\n    print(w)');
  await step.getByRole('button', { name: 'Copy the output' }).click();
  await expect(step.getByTestId('copy-output')).toHaveText('Copied');
  expect(await clipboard()).toBe('copy\nme\n');
  await answer.getByRole('button', { name: "Copy the answer's text" }).click();
  await expect(answer.getByTestId('copy-answer')).toHaveText('Copied');
  // The answer's own text, as the server keeps it (Markdown, not the page's markup).
  const saved = await (await chat.api('GET', `/api/v1/chats/${chat.chatId()}`)).json();
  const text: string = saved.messages[saved.messages.length - 1].text;
  expect(text.length).toBeGreaterThan(0);
  expect(await clipboard()).toBe(text);
});

test('the conversation follows the newest answer; opening it shows its end', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  const messages = chat.messages();
  const jump = page.getByTestId('jump-newest');
  await page.goto('/chat');
  for (const name of ['first run', 'second run', 'third run']) {
    if (name === 'third run') {
      // Read further up: the button offers the way back, and sending follows again.
      await messages.evaluate((el) => { el.scrollTop = 0; });
      await expect(jump).toBeVisible();
    }
    await chat.send(tallCode(name));
    await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
    await expect(chat.lastAnswer().getByTestId('tool-step')).toContainText('Run Python');
    await expect(chat.lastAnswer().getByTestId('tool-step')).toBeInViewport();
    await expect.poll(() => distanceToEnd(messages)).toBeLessThan(48);
    await expect(jump).toBeHidden();
  }
  expect(await messages.evaluate((el) => el.scrollHeight > 2 * el.clientHeight)).toBe(true);
  // Its title is the code's first line, without the fence.
  await expect(page.getByTestId('chat-title')).toHaveText('# note 1 of first run');
  await expect(chat.lastAnswer().locator('.markdown')).toHaveText('Ran 1 code block; its output is below.');

  // Opened again, it shows its end.
  await page.reload();
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
  await expect.poll(() => distanceToEnd(messages)).toBeLessThan(48);
  await expect(chat.lastAnswer().getByTestId('tool-step')).toBeInViewport();

  // The button brings the person back to the end and to the composer.
  await messages.evaluate((el) => { el.scrollTop = 0; });
  await expect(jump).toBeVisible();
  await jump.click();
  await expect(jump).toBeHidden();
  await expect.poll(() => distanceToEnd(messages)).toBeLessThan(48);
  await expect(chat.composer()).toBeFocused();

  // While an answer streams: followed, until the person scrolls up to read; then the view
  // stays put; the button follows again.
  await chat.withScriptedModel(MODEL_PORT, async () => {
    await chat.send('Count while I read');
    const answer = chat.lastAnswer();
    await expect(answer).toContainText('word3');
    await expect.poll(() => distanceToEnd(messages)).toBeLessThan(48);
    await messages.evaluate((el) => { el.scrollTop = 0; });
    await expect(jump).toBeVisible();
    await expect(answer).toContainText('word20');
    expect(await messages.evaluate((el) => el.scrollTop)).toBe(0);
    await jump.click();
    await expect(answer).toContainText('word70');
    await expect(answer).toHaveAttribute('data-status', 'streaming');
    await expect.poll(() => distanceToEnd(messages)).toBeLessThan(48);
    await expect(jump).toBeHidden();
    await page.getByTestId('stop').click();
    await expect(answer).toHaveAttribute('data-status', 'stopped');
  });
});

test('the page assistant\'s panel follows its newest answer too', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const library = new LibraryPage(page);
  await page.goto('/library');
  let panel = page.getByTestId('page-assistant');
  for (const name of ['panel one', 'panel two', 'panel three']) {
    panel = await library.askAssistant(tallCode(name));
    const answer = panel.getByTestId('assistant-message').last();
    await expect(answer).toHaveAttribute('data-status', 'complete');
    await expect(answer.getByTestId('tool-step')).toBeInViewport();
    await expect(answer.getByTestId('step-context')).toContainText("tokens of the model's context");
    await expect.poll(() => distanceToEnd(panel.getByTestId('messages'))).toBeLessThan(48);
  }
  // The panel's conversation shows its sandbox too.
  await expect(panel.getByTestId('sandbox-status')).toHaveAttribute('data-state', 'running');
  await expect(panel.getByTestId('sandbox-details')).toContainText('if unused');
  const messages = panel.getByTestId('messages');
  await messages.evaluate((el) => { el.scrollTop = 0; });
  await expect(panel.getByTestId('jump-newest')).toBeVisible();
  await expect(panel.getByTestId('assistant-message').last().getByTestId('tool-step')).not.toBeInViewport();
  await panel.getByTestId('jump-newest').click();
  await expect.poll(() => distanceToEnd(messages)).toBeLessThan(48);
  await expect(panel.getByTestId('jump-newest')).toBeHidden();
  await expect(panel.getByTestId('composer-input')).toBeFocused();
  // Its workspace can be browsed from the panel: a run's file is listed with its run.
  panel = await library.askAssistant('```bash\necho panel > from-panel.txt\n```');
  await expect(panel.getByTestId('assistant-message').last()).toHaveAttribute('data-status', 'complete');
  await panel.getByTestId('open-workspace').click();
  const row = panel.getByTestId('workspace-files').getByRole('row', { name: /from-panel\.txt/ });
  await expect(row).toContainText('6 B');
  await expect(row.getByTestId('made-by')).toHaveText('run 4');
  // A run edited and run again from the panel goes under its newest answer.
  const last = panel.getByTestId('assistant-message').last();
  const step = last.getByTestId('tool-step').first();
  await step.locator('summary').click();
  await step.getByRole('button', { name: 'Edit and run again' }).click();
  await step.getByRole('textbox', { name: "Code to run in this conversation's sandbox" }).fill('cat from-panel.txt');
  await step.getByRole('button', { name: 'Run' }).click();
  const mine = last.getByTestId('tool-step').nth(1);
  await expect(mine).toHaveAttribute('data-status', 'succeeded');
  await expect(mine.getByTestId('step-by-person')).toBeVisible();
  await mine.locator('summary').click();
  await expect(mine.getByTestId('run-stdout')).toHaveText('panel');
});

test('Settings > Code sandbox shows the check; a shorter time limit ends a long run', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  await page.goto('/settings/storage');
  await expect(page.getByTestId('storage').getByTestId('storage-free')).toContainText(/\d+ MiB free of \d+ MiB/);
  await page.goto('/settings/sandbox');
  const section = page.locator('section[aria-labelledby=sandbox-h]');
  await expect(section.getByTestId('check-item')).toHaveCount(7);
  await expect(section.getByTestId('check-item').filter({ hasText: 'Python' })).toContainText('numpy');
  await expect(section.locator('.check-list li.failed')).toHaveCount(0);
  // "Automatic" says what it stands for on this machine; unticked, the number is asked for.
  await expect(section.getByTestId('sandbox-max-running-auto')).toBeChecked();
  await expect(section.getByTestId('sandbox-max-running-auto').locator('xpath=..')).toHaveText(/^automatic \(\d+ on this machine: four per CPU\)$/);
  await expect(section.getByTestId('sandbox-max-running')).toBeHidden();
  await section.getByTestId('sandbox-max-running-auto').uncheck();
  await expect(section.getByTestId('sandbox-max-running')).toBeVisible();
  await expect(section.getByTestId('sandbox-max-running')).not.toHaveValue('0');
  await section.getByTestId('sandbox-max-running-auto').check();
  // Turned on by the server's --sandbox option: shown, locked.
  await expect(section.getByTestId('sandbox-enabled')).toBeChecked();
  await expect(section.getByTestId('sandbox-enabled')).toBeDisabled();
  await expect(section.getByTestId('sandbox-locked')).toBeVisible();
  await section.getByTestId('sandbox-timeout-secs').fill('2');
  await section.getByTestId('save-sandbox').click();
  await expect(section.getByTestId('sandbox-status')).toHaveText('Saved.');
  await section.getByTestId('sandbox-memory-mb').fill('1');
  await section.getByTestId('save-sandbox').click();
  await expect(section.getByTestId('sandbox-status')).toContainText('between 64 and');

  const chat = new ChatPage(page);
  await page.goto('/chat');
  await chat.send('```python\nimport time\nprint("started", flush=True)\ntime.sleep(30)\n```');
  const step = chat.lastAnswer().getByTestId('tool-step');
  await expect(step).toHaveAttribute('data-status', 'failed', { timeout: 15_000 });
  await step.locator('summary').click();
  await expect(step.getByTestId('run-stdout')).toHaveText('started');
  await expect(step.getByTestId('run-ending')).toHaveText('timed out after 2 s');

  await page.goto('/settings/sandbox');
  await section.getByTestId('sandbox-timeout-secs').fill('60');
  await section.getByTestId('save-sandbox').click();
  await expect(section.getByTestId('sandbox-status')).toHaveText('Saved.');
});

test('Stop during a long run ends the run and keeps its output', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  await chat.send('```python\nimport time\nfor i in range(300):\n    print("tick", i, flush=True)\n    time.sleep(0.1)\n```');
  const step = chat.lastAnswer().getByTestId('tool-step');
  await expect(step).toHaveAttribute('data-status', 'running');
  // Folded, the step shows its last lines; so does a second tab on the same chat.
  await expect(step.getByTestId('live-tail-stdout')).toContainText(/tick \d+/);
  await expect(step.getByTestId('live-stdout')).toBeHidden();
  const second = await page.context().newPage();
  await second.goto(page.url());
  const far = new ChatPage(second).lastAnswer().getByTestId('tool-step');
  await expect(far).toHaveAttribute('data-status', 'running');
  await expect(far.getByTestId('live-tail-stdout')).toContainText(/tick \d+/);
  const seen = Number((await far.getByTestId('live-tail-stdout').innerText()).match(/tick (\d+)\s*$/)![1]);
  await expect.poll(async () => Number((await far.getByTestId('live-tail-stdout').innerText()).match(/tick (\d+)\s*$/)![1]))
    .toBeGreaterThan(seen);
  expect((await far.getByTestId('live-tail-stdout').innerText()).split('\n').length).toBeLessThanOrEqual(3);
  await second.close();
  await step.locator('summary').click();
  await expect(step.getByTestId('live-stdout')).toContainText('tick 3');
  await expect(step.getByTestId('live-tail')).toBeHidden();
  await page.getByTestId('stop').click();
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'stopped');
  await expect(step).not.toHaveAttribute('data-status', 'running');
  await expect(step.getByTestId('run-stdout')).toContainText('tick 3');
  await expect(step.getByTestId('run-ending')).toHaveText('stopped before it finished');
  // The sandbox is free again: the next run answers at once.
  await chat.send('```python\nprint("after stop")\n```');
  const next = chat.lastAnswer().getByTestId('tool-step');
  await expect(next).toHaveAttribute('data-status', 'succeeded');
  await next.locator('summary').click();
  await expect(next.getByTestId('run-stdout')).toHaveText('after stop');
});

test('the admin makes an account in Settings; it cannot see the admin\'s chat', async ({ page, browser }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  await page.getByTestId('settings-link').click();
  await expect(page.getByTestId('account-name')).toHaveText(ADMIN.name);
  await page.getByTestId('settings-nav-model').click();
  await expect(page.getByTestId('model-provider')).toHaveValue('direct');
  // The model's context window: a setting, checked by the server, kept.
  await expect(page.getByTestId('model-context-tokens')).toHaveValue('32768');
  // Too small: the browser refuses the form (and the server would, with a sentence).
  await page.getByTestId('model-context-tokens').fill('100');
  await page.getByTestId('save-model').click();
  expect(await page.getByTestId('model-context-tokens').evaluate((el: HTMLInputElement) => el.validity.rangeUnderflow)).toBe(true);
  await expect(page.getByTestId('model-status')).toHaveText('');
  await page.getByTestId('model-context-tokens').fill('65536');
  await page.getByTestId('save-model').click();
  await expect(page.getByTestId('model-status')).toHaveText('Saved.');
  await page.reload();
  await expect(page.getByTestId('model-context-tokens')).toHaveValue('65536');
  await page.getByTestId('settings-nav-accounts').click();
  await page.getByTestId('new-username').fill(BOB.name);
  await page.getByTestId('new-password').fill(BOB.password);
  await page.getByTestId('create-user').click();
  await expect(page.getByTestId('users-status')).toHaveText(`Made ${BOB.name}.`);

  const bobContext = await browser.newContext();
  const bobPage = await bobContext.newPage();
  await new AuthPage(bobPage).login(BOB.name, BOB.password);
  await expect(bobPage.getByTestId('chat-link')).toHaveCount(0);
  await bobPage.goto(`/chat/${adminChat}`);
  await expect(bobPage.getByTestId('chat-not-found')).toBeVisible();
  const api = await bobPage.request.get(`/api/v1/chats/${adminChat}`);
  expect(api.status()).toBe(404);
  expect((await api.json()).error.code).toBe('not_found');
  await expect(bobPage.getByTestId('settings-link')).toBeVisible();
  await bobPage.getByTestId('settings-link').click();
  await expect(bobPage.getByTestId('account-name')).toHaveText(BOB.name);
  // A person's side list has their own sections; an admin's address says it is for admins.
  await expect(bobPage.getByTestId('settings-nav').getByRole('link')).toHaveText(['Account', 'API tokens']);
  await bobPage.goto('/settings/storage');
  await expect(bobPage.getByTestId('settings-admins-only')).toBeVisible();
  await expect(bobPage.getByTestId('storage')).toHaveCount(0);
  await bobPage.goto('/settings/model');
  await expect(bobPage.getByTestId('model-form')).toHaveCount(0);
  await bobContext.close();
});

test('Settings > Groups takes the sandbox from everyone: a person\'s run says why, their Account says what they may do, and a group of theirs gives it back', async ({ page, browser }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  await page.goto('/settings/groups');
  await expect(page.getByTestId('groups-none')).toBeVisible();
  await page.getByTestId('group-name').fill('everyone');
  await page.getByTestId('group-sandbox').uncheck();
  await page.getByTestId('group-network').selectOption('off');
  await page.getByTestId('save-group').click();
  await expect(page.getByTestId('groups-status')).toHaveText('Saved “everyone”. Its people\'s next run follows it.');
  await expect(page.getByTestId('group-everyone')).toContainText('no network');
  // An unknown member is refused with a sentence; nothing is saved.
  await page.getByTestId('group-name').fill('analysts');
  await page.getByTestId('group-sandbox').check();
  await page.getByTestId('group-members').fill('nobody-here');
  await page.getByTestId('save-group').click();
  await expect(page.getByTestId('groups-status')).toHaveText('there is no account named `nobody-here`');
  await expect(page.getByTestId('group-analysts')).toHaveCount(0);

  const bobContext = await browser.newContext();
  const bobPage = await bobContext.newPage();
  await new AuthPage(bobPage).login(BOB.name, BOB.password);
  const chat = new ChatPage(bobPage);
  await bobPage.goto('/chat');
  await chat.send('```python\nprint(6 * 7)\n```');
  const step = chat.lastAnswer().getByTestId('tool-step');
  await expect(step).toHaveAttribute('data-status', 'failed');
  await step.locator('summary').click();
  await expect(step.getByTestId('tool-step-result')).toContainText('your group (everyone) may not run code in the sandbox');
  await bobPage.goto('/settings/account');
  await expect(bobPage.getByTestId('my-rules')).toContainText('Run code in the sandbox: no');
  await expect(bobPage.getByTestId('my-rules-by')).toHaveText('Decided by your groups: everyone.');

  // A group with bob in it gives the sandbox back: the widest group wins, at his next run.
  await page.getByTestId('group-members').fill(BOB.name);
  await page.getByTestId('save-group').click();
  await expect(page.getByTestId('group-analysts')).toContainText(BOB.name);
  await bobPage.goto('/chat');
  await chat.send('```python\nprint(6 * 7)\n```');
  const again = chat.lastAnswer().getByTestId('tool-step');
  await expect(again).toHaveAttribute('data-status', 'succeeded');
  await bobPage.goto('/settings/account');
  await expect(bobPage.getByTestId('my-rules-by')).toHaveText('Decided by your groups: everyone, analysts.');
  await bobContext.close();

  // Deleted by keyboard-reachable buttons, named for their group: the site decides again.
  await page.getByRole('button', { name: 'Delete analysts' }).click();
  await expect(page.getByTestId('group-analysts')).toHaveCount(0);
  await page.getByRole('button', { name: 'Delete everyone' }).click();
  await expect(page.getByTestId('groups-none')).toBeVisible();
});

test('a run\'s chart shows inline; Share makes a chip that downloads exactly the bytes, for its owner only', async ({ page, browser, baseURL }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  const code = [
    '```python',
    'import matplotlib.pyplot as plt',
    'plt.plot([1, 2, 3], [3, 1, 2])',
    'plt.savefig("chart.png")',
    'open("table.csv", "w").write("city,people\\nLyon,522969\\n")',
    '```',
  ].join('\n');
  await chat.send(code);
  const step = chat.lastAnswer().getByTestId('tool-step');
  await expect(step).toHaveAttribute('data-status', 'succeeded');
  // The chart shows beneath the folded run, without opening it.
  const image = step.getByTestId('run-image');
  await expect(image).toBeVisible();
  await expect(step.locator('details')).not.toHaveAttribute('open', '');
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 100)).toBe(true);
  await expect(step.getByTestId('run-stdout')).toBeHidden();
  await step.locator('summary').click();
  await expect(step.getByTestId('tool-step-input')).toContainText('plt.savefig');
  await expect(step.getByTestId('made-file')).toHaveCount(2);

  const row = step.getByTestId('made-file').filter({ hasText: 'table.csv' });
  await row.getByTestId('share-file').click();
  const chip = row.getByTestId('file-chip');
  await expect(chip).toContainText('table.csv');
  const downloading = page.waitForEvent('download');
  await chip.click();
  const download = await downloading;
  expect(download.suggestedFilename()).toBe('table.csv');
  const fs = await import('node:fs');
  expect(fs.readFileSync(await download.path(), 'utf8')).toBe('city,people\nLyon,522969\n');

  // On disk, only ciphertext.
  const href = (await chip.getAttribute('href'))!;
  const [, cid, fid] = href.match(/chats\/([^/]+)\/files\/([^/?]+)/)!;
  const stored = fs.readFileSync(`${__dirname}/../../tmp/e2e-data/chat-files/${cid}/${fid}`);
  expect(stored.includes(Buffer.from('Lyon,522969'))).toBe(false);

  // After a reload the chip is still under the answer.
  await page.reload();
  await expect(chat.lastAnswer().getByTestId('shared-files').getByTestId('file-chip')).toContainText('table.csv');

  // Another account: 404.
  const other = await browser.newContext({ baseURL });
  const otherPage = await other.newPage();
  await new AuthPage(otherPage).login(BOB.name, BOB.password);
  expect((await otherPage.request.get(href)).status()).toBe(404);
  await other.close();

  // Deleting the conversation deletes the file.
  page.once('dialog', (d) => d.accept());
  await page.getByTestId('delete-chat').click();
  await expect(page).toHaveURL(/\/chat$/);
  expect(fs.existsSync(`${__dirname}/../../tmp/e2e-data/chat-files/${cid}`)).toBe(false);
  expect((await page.request.get(href)).status()).toBe(404);
});

test('an attached file reaches the run of the message that carries it', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  await page.getByTestId('attach-input').setInputFiles({
    name: 'sales.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from('region,total\nnorth,12\nsouth,30\n'),
  });
  await expect(page.getByTestId('attached-file')).toContainText('sales.csv');
  await chat.send('```python\nimport pandas as pd\nprint(pd.read_csv("attachments/sales.csv").total.sum())\n```');
  await expect(page.getByTestId('attached-file')).toHaveCount(0);
  await expect(page.getByTestId('message-attachment').last()).toContainText('sales.csv');
  const step = chat.lastAnswer().getByTestId('tool-step');
  await expect(step).toHaveAttribute('data-status', 'succeeded');
  await step.locator('summary').click();
  await expect(step.getByTestId('run-stdout')).toHaveText('42');
});

test('with the network on, a run after an attachment asks first: approve runs it, decline does not', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const setNetwork = async (mode: string, peopleAllow = false) => {
    await page.goto('/settings/sandbox');
    const section = page.locator('section[aria-labelledby=sandbox-h]');
    await expect(section.getByTestId('check-item')).toHaveCount(7);
    await section.getByTestId('sandbox-network').selectOption(mode);
    await section.getByTestId('sandbox-people-allow').setChecked(peopleAllow);
    await section.getByTestId('save-sandbox').click();
    await expect(section.getByTestId('sandbox-status')).toHaveText('Saved.');
  };
  await setNetwork('registries', true);
  const chat = new ChatPage(page);
  await page.goto('/chat');
  await page.getByTestId('attach-input').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello from a file') });
  await expect(page.getByTestId('attached-file')).toContainText('notes.txt');
  await chat.send('```bash\ncat attachments/notes.txt\n```');
  const card = chat.lastAnswer().getByTestId('approval-card');
  await expect(card).toContainText('Text you did not write');
  await expect(card.getByTestId('approval-code')).toHaveText('cat attachments/notes.txt');
  await expect(chat.lastAnswer().getByTestId('tool-step')).toHaveAttribute('data-status', 'waiting for your approval');
  await card.getByTestId('approve').click();
  const step = chat.lastAnswer().getByTestId('tool-step');
  await expect(step).toHaveAttribute('data-status', 'succeeded');
  await expect(chat.lastAnswer().getByTestId('approval-decided')).toHaveText('You approved this.');
  await step.locator('summary').click();
  await expect(step.getByTestId('run-stdout')).toHaveText('hello from a file');

  await chat.send('```bash\ntouch declined.txt\n```');
  await chat.lastAnswer().getByTestId('decline').click();
  await expect(chat.lastAnswer().getByTestId('tool-step')).toHaveAttribute('data-status', 'failed');
  await expect(chat.lastAnswer().getByTestId('approval-decided')).toHaveText('You declined this.');
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');

  // A run refused a host says so, folded; unfolded, the list says why.
  await chat.send('```bash\ncurl -sS -o /dev/null https://not-a-registry.invalid/ || echo refused\n```');
  await chat.lastAnswer().getByTestId('approve').click();
  const refusedStep = chat.lastAnswer().getByTestId('tool-step');
  await expect(refusedStep).toHaveAttribute('data-status', 'succeeded');
  await expect(refusedStep.getByTestId('step-network')).toHaveText('1 refused');
  await refusedStep.locator('summary').click();
  const row = refusedStep.getByTestId('network-row');
  await expect(row).toHaveAttribute('data-allowed', 'false');
  await expect(row).toContainText('not-a-registry.invalid:443');
  await expect(row).toContainText("not on the sandbox's list of allowed hosts");
  // The admin lets people allow hosts: allowed for this conversation, after a question,
  // the run again gets past the list (the name resolves nowhere, and says so).
  page.once('dialog', (dialog) => dialog.accept());
  await row.getByRole('button', { name: 'Allow not-a-registry.invalid in this conversation' }).click();
  await expect(refusedStep.getByTestId('allowed-host')).toHaveText('Allowed. Edit and run again to reach it.');
  await refusedStep.getByRole('button', { name: 'Edit and run again' }).click();
  await refusedStep.getByRole('button', { name: 'Run' }).click();
  const mine = chat.lastAnswer().getByTestId('tool-step').nth(1);
  await expect(mine).toHaveAttribute('data-status', 'succeeded');
  await mine.locator('summary').click();
  await expect(mine.getByTestId('network-row')).toContainText('does not resolve');
  await setNetwork('off');
});

test('an import asks first: decline keeps the library empty, approve puts the file there', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  const library = new LibraryPage(page);
  await chat.withScriptedModel(MODEL_PORT, async () => {
    // Settings > Model: the endpoint's models, and Test.
    await page.goto('/settings/model');
    await page.getByTestId('list-models').click();
    await expect(page.getByTestId('model-list-status')).toHaveText('The endpoint offers 1 model: pick it in Model name.');
    await expect(page.locator('#model-names option')).toHaveAttribute('value', 'scripted');
    await page.getByTestId('test-model').click();
    await expect(page.getByTestId('model-test-result')).toContainText(/^It answered, first word after \d+ ms: “word1 word2/);
    await page.goto('/chat');
    await chat.send('Import the report, please');
    let card = chat.lastAnswer().getByTestId('approval-card');
    await expect(card).toContainText('Import `report.txt` from the sandbox into your library, in `Reports`');
    await card.getByTestId('decline').click();
    await expect(chat.lastAnswer().getByTestId('approval-decided')).toHaveText('You declined this.');
    await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
    await expect(chat.lastAnswer().locator('.markdown')).toContainText('Finished: The person declined');
    const chatUrl = page.url();
    await page.getByTestId('library-link').click();
    await expect(page.getByTestId('library-empty')).toBeVisible();

    await page.goto(chatUrl);
    await chat.send('Import the report again');
    card = chat.lastAnswer().getByTestId('approval-card');
    await card.getByTestId('approve').click();
    await expect(chat.lastAnswer().getByTestId('approval-decided')).toHaveText('You approved this.');
    await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'complete');
    await expect(chat.lastAnswer().locator('.markdown')).toContainText('report.txt');

    // The library shows it; its page shows its text.
    await page.getByTestId('library-link').click();
    await expect(library.namespace('Reports')).toContainText('1 document');
    await library.namespace('Reports').getByRole('link', { name: 'Reports', exact: true }).click();
    await expect(page.getByTestId('namespace-title')).toHaveText('Reports');
    await page.getByTestId('document').getByRole('link', { name: 'report.txt', exact: true }).click();
    await expect(page.getByTestId('document-title')).toHaveText('report.txt');
    await expect(page.getByTestId('document-text')).toContainText('Quarterly revenue grew 12 percent.');
    // The namespace and the document are routes too: back, forward and by address.
    const documentUrl = page.url();
    await page.goBack();
    await expect(page.getByTestId('namespace-title')).toHaveText('Reports');
    const namespaceUrl = page.url();
    expect(namespaceUrl).toMatch(/\/library\/[a-z0-9]+$/);
    await page.goForward();
    await expect(page.getByTestId('document-title')).toHaveText('report.txt');
    await page.goto(namespaceUrl);
    await expect(page.getByTestId('document')).toHaveCount(1);
    await page.goto('/library/documents/no-such-document');
    await expect(page.getByTestId('document-not-found')).toBeVisible();
    await page.goto(documentUrl);
    await expect(page.getByTestId('document-text')).toContainText('Quarterly revenue grew 12 percent.');

    // The page assistant reads the document, and keeps its conversation with the page.
    let panel = await library.askAssistant('What does this document say?');
    const reply = panel.getByTestId('assistant-message').last();
    await expect(reply).toHaveAttribute('data-status', 'complete');
    await expect(reply.locator('.markdown')).toHaveText('The page says: Quarterly revenue grew 12 percent.');
    // Quietly under the answer: the model and what it cost, as the provider reported.
    await expect(reply.getByTestId('answer-usage')).toHaveText(/^scripted · \d+ tokens in, 2 out$/);
    await page.screenshot({ path: 'test-results/document-assistant.png' });
    await page.reload();
    await page.getByTestId('assistant-toggle').click();
    panel = page.getByTestId('page-assistant');
    await expect(panel.getByTestId('composer-input')).toBeFocused();
    await expect(panel.getByTestId('user-message').getByTestId('message-text')).toHaveText(['What does this document say?']);
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('assistant-toggle')).toBeFocused();
    await expect(page.getByTestId('assistant-toggle')).toHaveAttribute('aria-expanded', 'false');

    // Its conversation stays off the chat page's list.
    await page.goto('/chat');
    await expect(page.getByTestId('chat-link').filter({ hasText: 'What does this document say?' })).toHaveCount(0);

    // Delete the document, then the namespace.
    await page.goto('/library');
    await library.namespace('Reports').getByRole('link', { name: 'Reports', exact: true }).click();
    await page.getByTestId('document').getByRole('link', { name: 'report.txt', exact: true }).click();
    page.once('dialog', (d) => d.accept());
    await page.getByTestId('document-delete').click();
    await expect(page.getByTestId('namespace-title')).toHaveText('Reports');
    await expect(page.getByTestId('document')).toHaveCount(0);
    await page.getByTestId('library-link').click();
    page.once('dialog', (d) => d.accept());
    await library.namespace('Reports').getByRole('button', { name: 'Delete Reports' }).click();
    await expect(page.getByTestId('library-empty')).toBeVisible();

    // The admin sees each person's tokens for the last 30 days.
    await page.goto('/settings/usage');
    const row = page.getByTestId('usage').getByTestId('usage-row').filter({ hasText: ADMIN.name });
    await expect(row).toBeVisible();
    expect(Number(await row.locator('td').nth(1).innerText())).toBeGreaterThan(0);
  });
});

test('Settings > Model says so when moving the address to another host cleared the key', async ({ page }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  const chat = new ChatPage(page);
  await page.goto('/settings/model');
  try {
    await page.getByTestId('model-provider').selectOption('openai_compatible');
    await page.getByTestId('model-base-url').fill(`http://127.0.0.1:${MODEL_PORT}/v1`);
    await page.getByTestId('model-name').fill('scripted');
    await page.getByTestId('model-api-key').fill('sk-kept-at-home');
    await page.getByTestId('save-model').click();
    await expect(page.getByTestId('model-status')).toHaveText('Saved.');
    // Another host (a name, not the address): the key does not follow.
    await page.getByTestId('model-base-url').fill(`http://localhost:${MODEL_PORT}/v1`);
    await page.getByTestId('save-model').click();
    await expect(page.getByTestId('model-status')).toContainText('The API key was cleared');
    const saved = await (await chat.api('GET', '/api/v1/settings/model')).json();
    expect(saved.api_key_set).toBe(false);
  } finally {
    await chat.api('PUT', '/api/v1/settings/model', { provider: 'direct' });
  }
});

test('API tokens: made once, usable by an agent, revoked', async ({ page, playwright, baseURL }) => {
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  await page.goto('/settings/tokens');
  await page.getByTestId('token-name').fill('my agent');
  // Chat is chosen already; the admin may also give the admin scope.
  await expect(page.getByTestId('token-scope-chat')).toBeChecked();
  await expect(page.getByTestId('token-scope-approve')).not.toBeChecked();
  await page.getByTestId('token-scope-admin').check();
  await page.getByTestId('token-expiry-choice').selectOption({ label: '7 days' });
  await page.getByTestId('create-token').click();
  const secret = await page.getByTestId('token-secret').innerText();
  expect(secret).toMatch(/^lens_/);
  await expect(page.getByTestId('token-scopes')).toHaveText(' · chat, admin');
  await expect(page.getByTestId('token-expiry')).toContainText('expires 2');
  const agent = await playwright.request.newContext({ baseURL, extraHTTPHeaders: { authorization: `Bearer ${secret}` } });
  expect((await agent.get('/api/v1/chats')).status()).toBe(200);
  expect((await agent.get('/api/v1/settings/model')).status()).toBe(200);
  const refused = await agent.post('/api/v1/approvals/none', { data: { approve: true } });
  expect(refused.status()).toBe(403);
  expect((await refused.json()).error.message).toContain('`approve` scope');
  await page.getByRole('button', { name: 'Revoke my agent' }).click();
  await expect(page.getByTestId('token-row')).toHaveCount(0);
  expect((await agent.get('/api/v1/chats')).status()).toBe(401);
  await agent.dispose();
});

test('Settings > Code sandbox moves the sandboxes onto an OpenShell gateway, after asking, and back', async ({ page }) => {
  // The fake gateway speaks the real protocol over real mutual TLS; its folder holds
  // the certificates in the gateway's layout.
  const gateway = spawn('../target/release/lens-fake-gateway', [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    gateway.stdout.once('data', (d) => resolve(d.toString()));
    gateway.once('error', reject);
  });
  const { address, cert_dir } = JSON.parse(line);
  try {
    await new AuthPage(page).login(ADMIN.name, ADMIN.password);
    const chat = new ChatPage(page);
    await page.goto('/chat');
    await chat.send('```python\nimport os\nprint(os.environ["HOME"] == "/workspace")\n```');
    const here = chat.lastAnswer().getByTestId('tool-step');
    await expect(here).toHaveAttribute('data-status', 'succeeded');
    await here.locator('summary').click();
    await expect(here.getByTestId('run-stdout')).toHaveText('True');

    await page.goto('/settings/sandbox');
    const section = page.locator('section[aria-labelledby=sandbox-h]');
    // The settings have arrived (the form starts empty).
    await expect(section.getByTestId('sandbox-timeout-secs')).not.toHaveValue('');
    // Run the gateway here: what it needs (the server runs as under Compose, so all of
    // it), then, as Lens was given a host helper, a button in place of the command.
    await section.getByTestId('gateway-preflight-open').click();
    const needs = section.getByTestId('gateway-preflight-items').getByTestId('check-item');
    await expect(needs).toHaveCount(3);
    await expect(needs.first()).toContainText('Compose');
    await expect(section.getByTestId('gateway-preflight-items').locator('li.failed')).toHaveCount(0);
    await expect(section.getByTestId('gateway-command')).toBeHidden();
    const start = section.getByTestId('gateway-wait');
    await expect(start).toHaveText('Start the gateway and wait for it');
    await start.click();
    // The helper is asked; no gateway answers at the Compose address here, so Lens waits
    // and says why, until told to stop.
    const status = section.getByTestId('gateway-preflight-status');
    await expect(status).toContainText('Waiting for the gateway at openshell-gateway:17670 (try 1)', { timeout: 60_000 });
    await expect(start).toHaveText('Stop waiting');
    const calls = await (await fetch(`http://127.0.0.1:${MODEL_PORT}/helper/calls`)).json();
    expect(calls.calls).toBe(1);
    await start.click();
    await expect(start).toHaveText('Start the gateway and wait for it');
    await section.getByTestId('sandbox-backend-gateway').check();
    await section.getByTestId('sandbox-gateway-address').fill(address);
    await section.getByTestId('sandbox-gateway-certs').fill(cert_dir);
    // Declined: nothing changes.
    let asked = '';
    page.once('dialog', (d) => { asked = d.message(); void d.dismiss(); });
    await section.getByTestId('save-sandbox').click();
    await expect(section.getByTestId('sandbox-status')).toHaveText('Nothing was changed.');
    expect(asked).toMatch(/^Moving the sandboxes deletes (the 1 sandbox there is|all \d+ sandboxes), with the files/);
    // Accepted: checked, then moved.
    page.once('dialog', (d) => void d.accept());
    await section.getByTestId('save-sandbox').click();
    await expect(section.getByTestId('sandbox-status')).toHaveText('Saved.', { timeout: 60_000 });
    await expect(section.getByTestId('sandbox-gateway-check')).toContainText('Gateway: working.');
    await expect(section.getByTestId('sandbox-gateway-check')).toContainText('OpenShell 0.1.4');

    // Code runs on the gateway now.
    await page.goto('/chat');
    await chat.send('```python\nimport os\nprint(os.environ["HOME"] == "/workspace")\n```');
    const step = chat.lastAnswer().getByTestId('tool-step');
    await expect(step).toHaveAttribute('data-status', 'succeeded', { timeout: 60_000 });
    await step.locator('summary').click();
    await expect(step.getByTestId('run-stdout')).toHaveText('False');

    // And back to this machine.
    await page.goto('/settings/sandbox');
    await expect(section.getByTestId('sandbox-backend-gateway')).toBeChecked();
    await section.getByTestId('sandbox-backend-local').check();
    page.once('dialog', (d) => void d.accept());
    await section.getByTestId('save-sandbox').click();
    await expect(section.getByTestId('sandbox-status')).toHaveText('Saved.', { timeout: 60_000 });
    await expect(section.getByTestId('sandbox-backend-local')).toBeChecked();
  } finally {
    gateway.kill('SIGTERM');
  }
});

test('single sign-on: set up in Settings, the provider\'s own login page, back signed in, signed out at both ends; a group not allowed is told why', async ({ browser, baseURL }) => {
  // The admin registers the provider in Settings > Sign-in; passwords stay on for everyone
  // (the other tests' accounts).
  const setup = await browser.newContext();
  const admin = await setup.newPage();
  await new AuthPage(admin).login(ADMIN.name, ADMIN.password);
  await admin.goto('/settings/sign-in');
  const form = admin.getByTestId('sign-in-form');
  await expect(admin.getByTestId('sign-in-callback')).toHaveText(`${baseURL}/api/v1/auth/oidc/callback`);
  await expect(form.getByTestId('sign-in-client-secret')).toHaveAttribute('placeholder', '(none: a public client)');
  await form.getByLabel('Issuer').fill(OIDC_ISSUER);
  await form.getByLabel('Client id').fill(OIDC_CLIENT_ID);
  await form.getByLabel('Client secret').fill(OIDC_CLIENT_SECRET);
  await form.getByLabel('Scopes').fill('profile, email, groups');
  await form.getByLabel('Groups that may sign in').fill('staff');
  await form.getByLabel('Admin groups').fill('lens-admins');
  await form.getByLabel("Button's name").fill('Test ID');
  await form.getByLabel('Local passwords').selectOption('on');
  await form.getByTestId('save-sign-in').click();
  await expect(form.getByTestId('sign-in-status')).toHaveText('Saved. The next sign-in uses these settings.');
  await admin.reload();
  await expect(form.getByTestId('sign-in-client-secret')).toHaveAttribute('placeholder', '(set; type to replace)');
  await expect(form.getByTestId('sign-in-client-secret')).toHaveValue('');
  await expect(form.getByLabel('Groups that may sign in')).toHaveValue('staff');
  await setup.close();

  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto('/login');
  // Local passwords stay on here: both ways are offered.
  await expect(page.getByTestId('username')).toBeVisible();
  await page.getByTestId('sso-sign-in').click();
  await expect(page).toHaveTitle('Sign in to Test ID');
  await page.getByLabel('Username').fill('ada');
  await page.getByLabel('Password').fill('correct horse');
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page).toHaveURL(/\/chat/);
  await page.goto('/settings/account');
  await expect(page.getByTestId('account-name')).toHaveText('ada');

  await page.getByTestId('logout').click();
  await expect(page.getByRole('heading', { name: 'Sign out of Test ID?' })).toBeVisible();
  await page.getByRole('button', { name: 'Yes, sign me out' }).click();
  await expect(page).toHaveURL(/\/login/);
  const me = await page.request.get('/api/v1/me');
  expect(me.status()).toBe(401);

  // Cory's group (contractors) may not use Lens: a page that says so, and a way back.
  await page.getByTestId('sso-sign-in').click();
  await page.getByLabel('Username').fill('cory');
  await page.getByLabel('Password').fill('correct horse');
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page.getByRole('heading', { name: 'Signing in did not work' })).toBeVisible();
  await expect(page.getByRole('alert')).toContainText('not in a group that may use Lens');
  await page.getByRole('link', { name: 'Back to the sign-in page' }).click();
  await expect(page).toHaveURL(/\/login/);
  await context.close();

  // The figure: a sign-in through the provider against a local password, end to end, each
  // in a fresh browser context, alternated, in this run.
  const timed = async (how: 'provider' | 'password') => {
    const ctx = await browser.newContext();
    const p = await ctx.newPage();
    const started = performance.now();
    await p.goto('/login');
    if (how === 'provider') {
      await p.getByTestId('sso-sign-in').click();
      await p.getByLabel('Username').fill('ada');
      await p.getByLabel('Password').fill('correct horse');
      await p.getByRole('button', { name: 'Continue' }).click();
    } else {
      await new AuthPage(p).fill(ADMIN.name, ADMIN.password);
    }
    await expect(p.getByTestId('composer-input')).toBeVisible();
    const ms = performance.now() - started;
    await ctx.close();
    return ms;
  };
  const provider: number[] = [];
  const password: number[] = [];
  for (let i = 0; i < 5; i++) {
    provider.push(await timed('provider'));
    password.push(await timed('password'));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`figure: sign-in in Chromium, median of 5: through the provider ${median(provider).toFixed(0)} ms, `
    + `local password ${median(password).toFixed(0)} ms (${(median(provider) / median(password)).toFixed(2)}x)`);
});

test('Settings > Audit shows who signed in and who failed, filters by kind, and exports JSON Lines', async ({ browser, page }) => {
  // A failed sign-in from another browser first.
  const other = await browser.newContext();
  const stranger = await other.newPage();
  await stranger.goto('/login');
  await new AuthPage(stranger).fill(ADMIN.name, 'not the password');
  await expect(stranger.getByTestId('form-error')).not.toBeEmpty();
  await other.close();

  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  await page.goto('/settings/audit');
  const audit = page.getByTestId('audit');
  await expect(audit.getByTestId('audit-keep')).toContainText('kept 365 days');
  await expect(audit.locator('[data-testid=audit-row][data-action=sign_in]').first()).toContainText(ADMIN.name);
  await audit.getByTestId('audit-action').selectOption('sign_in_failed');
  await audit.getByTestId('audit-show').click();
  const failed = audit.getByTestId('audit-row');
  await expect(failed.first()).toContainText('Sign-in failed');
  await expect(failed.first()).toContainText('reason: wrong password');
  expect(await audit.locator('[data-testid=audit-row]:not([data-action=sign_in_failed])').count()).toBe(0);

  const [download] = await Promise.all([page.waitForEvent('download'), audit.getByTestId('audit-export').click()]);
  expect(download.suggestedFilename()).toMatch(/^lens-audit-\d+\.jsonl$/);
  const text = await (await import('node:fs/promises')).readFile((await download.path())!, 'utf8');
  const lines = text.trim().split('\n').map((l) => JSON.parse(l));
  expect(lines.length).toBe(await failed.count());
  expect(lines.every((l) => l.action === 'sign_in_failed')).toBe(true);
  expect(text).not.toContain('not the password');
});

test('each Settings section is its own page that fits at 1280 and 390 wide', async ({ browser }) => {
  const sections = [
    ['account', 'Account'], ['tokens', 'API tokens'], ['model', 'Model'], ['sandbox', 'Code sandbox'],
    ['storage', 'Storage'], ['sign-in', 'Sign-in'], ['groups', 'Groups'], ['usage', 'Usage'], ['audit', 'Audit'],
    ['accounts', 'Accounts'],
  ] as const;
  for (const width of [1280, 390]) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    await new AuthPage(page).login(ADMIN.name, ADMIN.password);
    for (const [slug, name] of sections) {
      await page.goto(`/settings/${slug}`);
      await expect(page.getByRole('heading', { level: 2 }).first()).toHaveText(name);
      await expect(page.getByTestId(`settings-nav-${slug}`)).toHaveAttribute('aria-current', 'page');
      await expect(page.getByTestId('settings-nav').getByRole('link')).toHaveCount(sections.length);
      if (slug === 'sandbox') {
        // Boxes and radios sit at the start of their own label, beside its words.
        await expect(page.getByTestId('check-item')).toHaveCount(7);
        for (const id of ['sandbox-enabled', 'sandbox-backend-local', 'sandbox-max-running-auto']) {
          const box = (await page.getByTestId(id).boundingBox())!;
          const label = (await page.getByTestId(id).locator('xpath=..').boundingBox())!;
          expect(box.x - label.x, id).toBeLessThan(8);
          expect(box.width, id).toBeLessThan(30);
        }
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${slug} at ${width}`).toBeLessThanOrEqual(width);
      await page.screenshot({ path: `test-results/settings-${slug}-${width}.png`, fullPage: true });
    }
    await context.close();
  }
});

test('works on a phone-sized screen and by keyboard alone', async ({ browser }) => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await new AuthPage(page).login(ADMIN.name, ADMIN.password);
  // Tab from the page start to the composer, type, send with Enter.
  await page.getByTestId('composer-input').focus();
  await page.keyboard.type('From the keyboard');
  await page.keyboard.press('Enter');
  const answer = page.getByTestId('assistant-message').last();
  await expect(answer).toHaveAttribute('data-status', 'complete');
  await expect(page.getByTestId('composer-input')).toBeInViewport();
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width).toBeLessThanOrEqual(390);
  await page.screenshot({ path: 'test-results/phone.png', fullPage: true });
  // The library and its assistant fit too, and open from the keyboard.
  await page.getByTestId('library-link').first().click();
  await page.getByTestId('assistant-toggle').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('page-assistant').getByTestId('composer-input')).toBeFocused();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.screenshot({ path: 'test-results/phone-library.png', fullPage: true });
  await context.close();
});
