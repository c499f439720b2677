import { defineConfig } from '@playwright/test';
// A real OpenID Connect provider (panva's oidc-provider) for single sign-on, which the
// single sign-on test sets up in Settings > Sign-in.
import { OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_PORT } from './oidc';

// The real release server on a fresh data directory, plus a scripted OpenAI-compatible
// model endpoint (fake-model.mjs) for the tests that need a slow, steady answer.
const PORT = process.env.LENS_E2E_PORT ?? '8181';
const MODEL_PORT = process.env.LENS_E2E_MODEL_PORT ?? '8182';
// Lens's own default, the port after its own, is the model's here.
const PREVIEW_PORT = process.env.LENS_E2E_PREVIEW_PORT ?? '8183';
const DATA = '../tmp/e2e-data';

export default defineConfig({
  testDir: './tests',
  timeout: 60_000,
  expect: { timeout: 15_000 },
  retries: 0,
  workers: 1,
  fullyParallel: false,
  reporter: [['list']],
  outputDir: './test-results',
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    browserName: 'chromium',
    headless: true,
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      // No --user-data-dir: Playwright rejects it and makes a fresh profile itself.
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
    trace: 'off',
    screenshot: 'only-on-failure',
  },
  webServer: [
    {
      command: 'node oidc-provider.mjs',
      url: `http://127.0.0.1:${OIDC_PORT}/.well-known/openid-configuration`,
      reuseExistingServer: false,
      timeout: 30_000,
      env: { OIDC_PORT, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET },
    },
    {
      command: `node fake-model.mjs ${MODEL_PORT}`,
      url: `http://127.0.0.1:${MODEL_PORT}/healthz`,
      reuseExistingServer: false,
      timeout: 10_000,
    },
    {
      // Workspaces are mounted while their sandboxes run: a server that was killed rather
      // than stopped leaves them mounted, so they are unmounted before the folder goes.
      command: `bash -c 'grep -o " $(realpath -m ${DATA})/sandboxes/[^ ]*" /proc/self/mountinfo | xargs -r -n1 umount -l; rm -rf ${DATA} && exec ../target/release/lens serve --addr 127.0.0.1:${PORT} --data-dir ${DATA} --web-dist ../dist --sandbox'`,
      url: `http://127.0.0.1:${PORT}/healthz`,
      reuseExistingServer: false,
      timeout: 30_000,
      // Stopped with SIGTERM, so the server stops its sandboxes and unmounts their workspaces.
      gracefulShutdown: { signal: 'SIGTERM', timeout: 10_000 },
      // Every answer-events response ends after a second, so each test that follows a
      // running answer also proves the browser resumes with Last-Event-ID.
      // As under compose.yaml (so the gateway's preflight is the same on every machine),
      // with the fake model's server as the host helper that starts the gateway.
      env: {
        LENS_LOG: 'warn',
        LENS_SSE_MAX_SECS: '1',
        LENS_COMPOSE: '1',
        LENS_HOST_HELPER: `http://127.0.0.1:${MODEL_PORT}/helper`,
        LENS_PREVIEW_ADDR: `127.0.0.1:${PREVIEW_PORT}`,
      },
    },
  ],
});
