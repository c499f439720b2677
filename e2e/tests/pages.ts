// Page objects: what a person does on each page, in one place.
import { expect, type Locator, type Page } from '@playwright/test';

/** Pixels between the bottom of what a conversation's list shows and its end. */
export function distanceToEnd(messages: Locator): Promise<number> {
  return messages.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
}

/** A fenced Python block as tall as a screen: 30 comment lines, then a print. */
export function tallCode(name: string): string {
  const notes = Array.from({ length: 30 }, (_, i) => `# note ${i + 1} of ${name}`).join('\n');
  return `\`\`\`python\n${notes}\nprint("${name} done")\n\`\`\``;
}

/** An answer's text once it has stopped changing: the page renders a streaming answer at
 *  most once a frame, so the last delta shows a moment after it arrived. */
export async function settledText(markdown: Locator): Promise<string> {
  let before = await markdown.innerText();
  for (;;) {
    await markdown.page().waitForTimeout(300);
    const now = await markdown.innerText();
    if (now === before) return now;
    before = now;
  }
}

export class AuthPage {
  constructor(readonly page: Page) {}

  async fill(username: string, password: string, confirm = false) {
    await this.page.getByTestId('username').fill(username);
    await this.page.getByTestId('password').fill(password);
    if (confirm) await this.page.getByTestId('password-again').fill(password);
    await this.page.getByTestId('submit').click();
  }

  async login(username: string, password: string) {
    await this.page.goto('/login');
    await this.fill(username, password);
    await expect(this.page).toHaveURL(/\/chat/);
  }
}

export class ChatPage {
  constructor(readonly page: Page) {}

  composer() {
    return this.page.getByTestId('composer-input');
  }

  /** Types a message and sends it with the Enter key. */
  async send(text: string) {
    await this.composer().fill(text);
    await this.composer().press('Enter');
  }

  lastAnswer() {
    return this.page.getByTestId('assistant-message').last();
  }

  /** The scrolling list of the conversation's messages. */
  messages() {
    return this.page.getByTestId('messages');
  }

  /** The chat id in the URL. */
  chatId(): string {
    const m = this.page.url().match(/\/chat\/([a-z0-9]+)/);
    if (!m) throw new Error(`no chat id in ${this.page.url()}`);
    return m[1];
  }

  /** Runs `body` with the model set to the scripted endpoint, then back to Direct. */
  async withScriptedModel(modelPort: string, body: () => Promise<void>) {
    const set = await this.api('PUT', '/api/v1/settings/model', {
      provider: 'openai_compatible', base_url: `http://127.0.0.1:${modelPort}/v1`, model: 'scripted',
    });
    expect(set.status()).toBe(200);
    try {
      await body();
    } finally {
      await this.api('PUT', '/api/v1/settings/model', { provider: 'direct' });
    }
  }

  /** Calls the API as the logged-in person (with the CSRF proof). */
  async api(method: string, path: string, data?: unknown) {
    const me = await this.page.request.get('/api/v1/me');
    const { csrf_token } = await me.json();
    // A browser's own fetch sends Origin; Playwright's request context does not.
    const origin = new URL(this.page.url()).origin;
    return this.page.request.fetch(path, { method, data, headers: { 'x-csrf-token': csrf_token, origin } });
  }
}

export class LibraryPage {
  constructor(readonly page: Page) {}

  namespace(name: string) {
    return this.page.getByTestId('namespace').filter({ has: this.page.getByRole('link', { name, exact: true }) });
  }

  /** Opens the page assistant and asks it `text`; returns the panel. */
  async askAssistant(text: string) {
    const panel = this.page.getByTestId('page-assistant');
    if (!(await panel.isVisible())) await this.page.getByTestId('assistant-toggle').click();
    await panel.getByTestId('composer-input').fill(text);
    await panel.getByTestId('composer-input').press('Enter');
    return panel;
  }
}

/** The workspace browser of the conversation on screen (the chat page's or the panel's). */
export class WorkspaceFiles {
  readonly list: Locator;

  constructor(readonly within: Page | Locator) {
    this.list = within.getByTestId('workspace-files');
  }

  async open() {
    await this.within.getByTestId('open-workspace').click();
  }

  row(name: string): Locator {
    return this.list.getByRole('row', { name: new RegExp(name.replace(/\./g, '\\.')) });
  }

  async share(name: string) {
    await this.list.getByRole('button', { name: `Share ${name}` }).click();
  }

  /** Opens (or closes) a shared file's preview; its row. */
  async togglePreview(name: string): Promise<Locator> {
    const row = this.row(name);
    await row.getByRole('button', { name: `Open ${name} here` }).click();
    return row;
  }
}
