// A Lens of its own listening beyond loopback: the setup page asks for the one-time code
// the server printed in its log, refuses a wrong one with a sentence, and takes the right
// one (as printed, from the log) to make the admin account.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { AuthPage } from './pages';

const PORT = Number(process.env.LENS_E2E_PORT ?? '8181') + 3;

test('on the network, setup asks for the code from the log', async ({ page }) => {
  const data = mkdtempSync(join(tmpdir(), 'lens-e2e-network-'));
  const lens: ChildProcess = spawn('../target/release/lens',
    ['serve', '--addr', `0.0.0.0:${PORT}`, '--data-dir', data, '--web-dist', '../dist'],
    { env: { ...process.env, LENS_LOG: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const code = await new Promise<string>((resolve, reject) => {
      let seen = '';
      const read = (chunk: Buffer) => {
        seen += chunk.toString();
        const m = seen.match(/setup code: ([A-Z0-9-]+)/);
        if (m) resolve(m[1]);
      };
      lens.stdout?.on('data', read);
      lens.stderr?.on('data', read);
      lens.on('exit', () => reject(new Error(`lens ended before printing a setup code: ${seen}`)));
      setTimeout(() => reject(new Error(`no setup code within 30 s: ${seen}`)), 30_000);
    });
    await expect.poll(async () => (await page.request.get(`http://127.0.0.1:${PORT}/healthz`).catch(() => null))?.status())
      .toBe(200);

    await page.goto(`http://127.0.0.1:${PORT}/setup`);
    const field = page.getByLabel('Setup code');
    await expect(field).toBeVisible();
    await field.fill('AAAA-BBBB-CCCC-DDDD');
    await new AuthPage(page).fill('admin', 'admin-password', true);
    await expect(page.getByTestId('form-error')).toContainText('not the setup code');
    await expect(page).toHaveURL(/\/setup$/);

    await field.fill(code);
    await page.getByTestId('submit').click();
    await expect(page).toHaveURL(/\/chat/);
  } finally {
    lens.kill('SIGTERM');
    rmSync(data, { recursive: true, force: true });
  }
});
