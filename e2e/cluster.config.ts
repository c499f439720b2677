import { defineConfig } from '@playwright/test';

// Lens on three replicas behind nginx, with PostgreSQL, Garage and the fake OpenShell
// gateway, all started by scripts/cluster, which runs this suite and hands it the
// addresses: nginx's (CLUSTER_URL) and each replica's (CLUSTER_REPLICAS, with their
// process ids in CLUSTER_PIDS, so a test can kill one).
//   scripts/cluster bash -c 'cd e2e && npx playwright test -c cluster.config.ts'
export default defineConfig({
  testDir: './cluster',
  timeout: 240_000,
  expect: { timeout: 30_000 },
  retries: 0,
  workers: 1,
  fullyParallel: false,
  reporter: [['list']],
  outputDir: './test-results/cluster',
  use: {
    baseURL: process.env.CLUSTER_URL,
    browserName: 'chromium',
    headless: true,
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
    trace: 'off',
    screenshot: 'only-on-failure',
  },
});
