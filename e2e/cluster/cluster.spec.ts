// Lens on three replicas behind nginx (scripts/cluster): a person's page follows, on one
// replica, an answer another replica writes, and a third stops it; a chart and an
// odd-named binary file come back byte for byte through nginx; a replica killed mid-answer
// loses nothing and the next message works.
import { createHash } from 'node:crypto';
import { test, expect, type APIResponse, type Page } from '@playwright/test';
import { AuthPage, ChatPage } from '../tests/pages';

const FRONT = process.env.CLUSTER_URL!;
const REPLICAS = (process.env.CLUSTER_REPLICAS ?? '').split(' ');
const PIDS = (process.env.CLUSTER_PIDS ?? '').split(' ').map(Number);
const ADMIN = { name: 'admin', password: 'admin-password-1' };

/** Calls the API on `base` (one replica, or nginx) as the page's person. Sessions are
 *  in the shared database; the cookie is the host's, whatever the port. */
async function api(page: Page, base: string, method: string, path: string, data?: unknown): Promise<APIResponse> {
  const me = await page.request.get(`${base}/api/v1/me`);
  expect(me.status()).toBe(200);
  const { csrf_token } = await me.json();
  return page.request.fetch(`${base}${path}`, { method, data, headers: { 'x-csrf-token': csrf_token, origin: base } });
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

test.describe.configure({ mode: 'serial' });

test('three replicas behind nginx: follow on one, written by another, stopped from a third; files byte for byte; one killed', async ({ browser }) => {
  expect(REPLICAS.length, 'scripts/cluster gives three replicas').toBe(3);
  const [one, two, three] = REPLICAS;
  const context = await browser.newContext({ baseURL: one });
  const page = await context.newPage();
  const chat = new ChatPage(page);

  // Set up through nginx, then the person's page is on replica one.
  await page.goto(`${FRONT}/`);
  await expect(page).toHaveURL(/\/setup$/);
  await new AuthPage(page).fill(ADMIN.name, ADMIN.password, true);
  await expect(page).toHaveURL(/\/chat$/);

  // Replica two is asked (so writes the answer); the page, on one, follows it live.
  const made = await api(page, two, 'POST', '/api/v1/chats', {});
  expect(made.status()).toBe(201);
  const cid = (await made.json()).id as string;
  const ticks = '```python\nimport time\nopen("kept.txt", "w").write("made before\\n")\nfor i in range(3000):\n    print("tick", i, flush=True)\n    time.sleep(0.1)\n```';
  const asked = await api(page, two, 'POST', `/api/v1/chats/${cid}/messages`, { text: ticks });
  expect(asked.status()).toBe(202);
  const aid = (await asked.json()).answer_id as string;
  await page.goto(`${one}/chat/${cid}`);
  const step = chat.lastAnswer().getByTestId('tool-step');
  await expect(step).toHaveAttribute('data-status', 'running');
  const tail = step.getByTestId('live-tail-stdout');
  await expect(tail).toContainText(/tick \d+/);
  const tick = async () => Number((await tail.innerText()).match(/tick (\d+)\s*$/)![1]);
  const seen = await tick();
  await expect.poll(tick, { message: 'the output grows on the page while another replica runs it' }).toBeGreaterThan(seen);

  // Stop from replica three.
  const stop = await api(page, three, 'POST', `/api/v1/chats/${cid}/answers/${aid}/stop`, {});
  expect(stop.status()).toBe(202);
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'stopped');
  await expect(step.getByTestId('run-ending')).toHaveText('stopped before it finished');

  // From the page (replica one): a chart and a binary file with an odd name.
  const odd = 'données #1 (copie) ü.bin';
  await chat.send([
    '```python',
    'import hashlib, os',
    'import matplotlib',
    'matplotlib.use("Agg")',
    'import matplotlib.pyplot as plt',
    'plt.plot([1, 2, 3], [3, 1, 2])',
    'plt.savefig("chart.png")',
    `open(${JSON.stringify(odd)}, "wb").write(bytes(range(256)) * 64 + os.urandom(4096))`,
    'open("page.html", "w").write("<p id=x>waiting</p><script>document.getElementById(\'x\').textContent = \'ran\'</script>")',
    `for name in ["chart.png", ${JSON.stringify(odd)}]:`,
    '    print(name, hashlib.sha256(open(name, "rb").read()).hexdigest())',
    '```',
  ].join('\n'));
  const charted = chat.lastAnswer().getByTestId('tool-step');
  await expect(charted).toHaveAttribute('data-status', 'succeeded');
  const image = charted.getByTestId('run-image');
  await expect(image).toBeVisible();
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 100)).toBe(true);
  await charted.locator('summary').click();
  const printed = await charted.getByTestId('run-stdout').innerText();
  const digest = (name: string) => printed.split('\n').find((l) => l.startsWith(`${name} `))!.slice(name.length + 1).trim();

  const src = (await image.getAttribute('src'))!;
  const chartBytes = await (await page.request.get(`${FRONT}${src}`)).body();
  expect(sha256(chartBytes), 'the chart through nginx').toBe(digest('chart.png'));

  const row = charted.getByTestId('made-file').filter({ hasText: odd });
  await row.getByTestId('share-file').click();
  const chip = row.getByTestId('file-chip');
  await expect(chip).toContainText(odd);
  const downloading = page.waitForEvent('download');
  await chip.click();
  const download = await downloading;
  expect(download.suggestedFilename()).toBe(odd);
  const fs = await import('node:fs');
  expect(sha256(fs.readFileSync(await download.path())), 'downloaded on replica one').toBe(digest(odd));
  const href = (await chip.getAttribute('href'))!;
  for (const base of [FRONT, two, three]) {
    const got = await page.request.get(`${base}${href}`);
    expect(got.status()).toBe(200);
    expect(sha256(await got.body()), `downloaded from ${base}`).toBe(digest(odd));
  }

  // An HTML file opens from the preview origin, itself behind nginx: its script runs there.
  const pageRow = charted.getByTestId('made-file').filter({ hasText: 'page.html' });
  await pageRow.getByTestId('share-file').click();
  await pageRow.getByRole('button', { name: 'Open page.html here' }).click();
  const frame = pageRow.getByTestId('preview-frame');
  const framed = new URL((await frame.getAttribute('src'))!);
  expect(framed.origin).not.toBe(new URL(one).origin);
  expect(framed.origin).not.toBe(new URL(FRONT).origin);
  await expect(pageRow.frameLocator('[data-testid=preview-frame]').locator('#x')).toHaveText('ran');

  // The conversation's sandbox is driven by the replica that ran it first (two): a long
  // run there, then two is killed (SIGKILL) mid-run.
  await chat.send('```bash\necho "second run"; for i in $(seq 1 3000); do echo "beat $i"; sleep 0.1; done\n```');
  const long = chat.lastAnswer().getByTestId('tool-step');
  await expect(long).toHaveAttribute('data-status', 'running');
  // The run's output so far is saved about every second: two seconds of it, then the kill.
  const beat = async () => Number((await long.getByTestId('live-tail-stdout').innerText()).match(/beat (\d+)\s*$/)?.[1] ?? 0);
  await expect.poll(beat).toBeGreaterThan(25);
  process.kill(PIDS[1], 'SIGKILL');
  // Another replica marks the answer interrupted, with the output so far.
  await expect(chat.lastAnswer()).toHaveAttribute('data-status', 'interrupted', { timeout: 90_000 });
  await page.reload();
  const kept = chat.lastAnswer().getByTestId('tool-step');
  await kept.locator('summary').click();
  await expect(kept.getByTestId('run-stdout')).toContainText('second run');
  await expect(kept.getByTestId('run-stdout')).toContainText('beat 1');

  // The next message works, from the page, and the sandbox's files are there.
  await chat.send('```bash\ncat kept.txt\n```');
  const next = chat.lastAnswer().getByTestId('tool-step');
  await expect(next).toHaveAttribute('data-status', 'succeeded', { timeout: 120_000 });
  await next.locator('summary').click();
  await expect(next.getByTestId('run-stdout')).toHaveText('made before');

  // Through nginx, the conversation reads the same with a replica gone.
  const detail = await page.request.get(`${FRONT}/api/v1/chats/${cid}`);
  expect(detail.status()).toBe(200);
  const statuses = (await detail.json()).messages.filter((m: { role: string }) => m.role === 'assistant')
    .map((m: { status: string }) => m.status);
  expect(statuses).toEqual(['stopped', 'complete', 'interrupted', 'complete']);
  await context.close();
});
