/**
 * The console's agents view in a real headless Chromium against a real server (uWS, LevelDB in a temp dir): the
 * chat keeps the newest message in view, conversations get readable titles, the user's bubble is legible in both
 * colour schemes, and the memory browser asks for working memory only when the reader opens it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type ElementHandle, type Page } from 'playwright-core';
import { createAgent } from '../../src/agents/define-agent.js';
import { createDemoModel } from '../../src/agents/models/demo-model.js';
import { agentMemory } from '../../src/memory/agent-memory.js';
import { buildConsole } from '../../scripts/build-console.mjs';
import { CHROMIUM_ARGS, ensureChromium } from '../helpers/chromium.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { closeClean, openWatchedPage } from '../helpers/console-page.js';

// page.evaluate callbacks run in the browser; the project compiles without the DOM library
declare function getComputedStyle(el: unknown): any;

const assistant = createAgent({
  id: 'assistant',
  name: 'Assistant',
  instructions: 'Answer briefly.',
  model: createDemoModel({ tokenDelayMs: 20 }),
  memory: agentMemory({ workingMemory: { enabled: true, scope: 'conversation', format: 'markdown' } }),
});
const notes = createAgent({
  id: 'notes',
  name: 'Notes',
  instructions: 'Answer briefly.',
  model: createDemoModel(),
  memory: agentMemory(),
});

let t: TestServer;
let browser: Browser;
const memory = (path: string, json: unknown) => api(`${t.url}/api/memory${path}`, { method: 'POST', json });
const openPage = (path: string) => openWatchedPage(browser, t.url, path);

/** A conversation of `agentId` saved through the API: `pairs` user/assistant exchanges of a few lines each. */
async function savedConversation(agentId: string, userId: string, pairs: number, title: string): Promise<string> {
  const conversationId = randomUUID();
  expect((await memory('/conversations', { agentId, userId, conversationId, title })).status).toBe(201);
  const messages = Array.from({ length: pairs }, (_, i) => [
    { role: 'user', content: `Question ${i}: how does step ${i} of the plan work?` },
    { role: 'assistant', content: `Answer ${i}: ${'it works because the previous step finished. '.repeat(4)}` },
  ]).flat();
  expect((await memory('/save-messages', { agentId, userId, conversationId, messages })).status).toBe(200);
  return conversationId;
}

/** How far the element's scroll position is from its bottom, in pixels, and whether it overflows at all. */
const scrollGap = (page: Page, selector: string) => page.$eval(selector, (el: any) => ({ gap: el.scrollHeight - el.clientHeight - el.scrollTop, overflows: el.scrollHeight > el.clientHeight + 10 }));

/** WCAG contrast ratio between an element's text colour and the first opaque background behind it. */
function contrastOf(el: ElementHandle) {
  return el.evaluate((node: any) => {
    const parse = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
    const lum = ([r, g, b]: number[]) => {
      const ch = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b);
    };
    const fg = parse(getComputedStyle(node).color);
    let bg: number[] = [255, 255, 255];
    for (let e = node; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] === 1)) {
        bg = c.slice(0, 3);
        break;
      }
    }
    const [a, b] = [lum(fg.slice(0, 3)), lum(bg)].sort((x, y) => y - x);
    return (a + 0.05) / (b + 0.05);
  });
}

beforeAll(async () => {
  await buildConsole();
  const executablePath = ensureChromium();
  t = await startTestServer({ agents: [assistant, notes] });
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the agent chat', () => {
  it('opens a long conversation scrolled to its newest message and keeps the newest reply in view', async () => {
    const conv = await savedConversation('assistant', 'scroller', 20, 'Long talk');
    const w = await openPage(`/console?view=agents&agent=assistant&user=scroller&conv=${conv}`);
    const { page } = w;
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('.chat .msg').length === 40);
    await page
      .waitForFunction(
        () => {
          const el = (globalThis as any).document.querySelector('.chat .messages');
          return el.scrollHeight - el.clientHeight - el.scrollTop <= 2;
        },
        undefined,
        { timeout: 5_000 },
      )
      .catch(() => undefined);
    const opened = await scrollGap(page, '.chat .messages');
    expect(opened.overflows).toBe(true);
    expect(opened.gap).toBeLessThanOrEqual(2);
    // a new exchange: the streamed reply stays in view to its last word
    await page.fill('input[name="message"]', `Please repeat ${Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ')}`);
    await page.click('form.composer button[type="submit"]');
    await page.waitForSelector('.chat .msg-assistant[data-done="true"]:has-text("word29")', { timeout: 15_000 });
    expect((await scrollGap(page, '.chat .messages')).gap).toBeLessThanOrEqual(2);
    await closeClean(w);
  });

  it('leaves the scroll position alone when the reader scrolls up while a reply streams in', async () => {
    const conv = await savedConversation('assistant', 'reader', 20, 'Reading back');
    const w = await openPage(`/console?view=agents&agent=assistant&user=reader&conv=${conv}`);
    const { page } = w;
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('.chat .msg').length === 40);
    await page.fill('input[name="message"]', `Please repeat ${Array.from({ length: 150 }, (_, i) => `word${i}`).join(' ')}`);
    await page.click('form.composer button[type="submit"]');
    await page.waitForSelector('.chat .msg-assistant:not([data-done]) .msg-text:has-text("word1")', { timeout: 15_000 });
    await page.$eval('.chat .messages', (el: any) => (el.scrollTop = 0));
    await page.waitForSelector('.chat .msg-assistant[data-done="true"]:has-text("word149")', { timeout: 15_000 });
    expect(await page.$eval('.chat .messages', (el: any) => el.scrollTop)).toBe(0);
    await closeClean(w);
  });
});

describe('conversation titles', () => {
  it('names a conversation by its first user message, or else by a readable date, never by a raw timestamp', async () => {
    const selected = await savedConversation('assistant', 'titles', 2, `New Chat ${new Date('2026-03-04T05:06:07.000Z').toISOString()}`);
    const other = await savedConversation('assistant', 'titles', 1, `New Chat ${new Date('2026-03-05T08:09:10.000Z').toISOString()}`);
    const named = await savedConversation('assistant', 'titles', 1, 'Trip planning');
    const w = await openPage(`/console?view=agents&agent=assistant&user=titles&conv=${selected}`);
    const { page } = w;
    await page.waitForSelector('.conv-messages [data-message-id]');
    const title = (id: string) => page.textContent(`.conversations [data-conversation-id="${id}"] a`);
    await page.waitForFunction((id) => (globalThis as any).document.querySelector(`.conversations [data-conversation-id="${id}"] a`)?.textContent.startsWith('Question 0'), selected, {
      timeout: 5_000,
    });
    expect(await title(selected)).toBe('Question 0: how does step 0 of the plan work?');
    const dated = (await title(other))!;
    expect(dated).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
    expect(dated).toMatch(/^Chat of .*2026/);
    expect(await title(named)).toBe('Trip planning');
    // the chat's own new conversation is titled by what the user typed
    await page.goto(`${t.url}/console?view=agents&agent=assistant&user=titles`);
    await page.fill('input[name="message"]', 'Where should we go in June?');
    await page.click('form.composer button[type="submit"]');
    await page.waitForSelector('.chat .msg-assistant[data-done="true"]', { timeout: 15_000 });
    await page.waitForSelector('.conversations a:text-is("Where should we go in June?")');
    for (const text of await page.$$eval('.conversations a', (as) => as.map((a: any) => a.textContent))) expect(text).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
    await closeClean(w);
  });
});

describe('the user’s messages', () => {
  it('show their role label and text with at least AA contrast (4.5:1) in light and dark mode', async () => {
    const conv = await savedConversation('assistant', 'contrast', 1, 'Contrast');
    const w = await openPage(`/console?view=agents&agent=assistant&user=contrast&conv=${conv}`);
    const { page } = w;
    await page.waitForSelector('.conv-messages .msg-user > span:first-child');
    await page.waitForSelector('.chat .msg-user .msg-text');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      const label = (await page.$('.conv-messages .msg-user > span:first-child'))!;
      expect(await label.textContent()).toBe('user');
      expect(await contrastOf(label)).toBeGreaterThanOrEqual(4.5);
      expect(await contrastOf((await page.$('.conv-messages .msg-user > span:nth-child(2)'))!)).toBeGreaterThanOrEqual(4.5);
      expect(await contrastOf((await page.$('.chat .msg-user .msg-text'))!)).toBeGreaterThanOrEqual(4.5);
    }
    await closeClean(w);
  });
});

describe('working memory in the memory browser', () => {
  it('is not requested for a conversation until the reader opens it, and then shows what was written', async () => {
    const empty = await savedConversation('assistant', 'wm-user', 1, 'No memory yet');
    const written = await savedConversation('assistant', 'wm-user', 1, 'Remembers');
    expect((await memory(`/conversations/${written}/working-memory?agentId=assistant`, { content: '# Facts\n- likes tea', userId: 'wm-user' })).status).toBe(200);
    const asked: string[] = [];
    const w = await openPage(`/console?view=agents&agent=assistant&user=wm-user&conv=${empty}`);
    const { page } = w;
    page.on('request', (req) => {
      if (req.url().includes('/working-memory')) asked.push(new URL(req.url()).pathname);
    });
    await page.waitForSelector('.conv-messages [data-message-id]');
    await page.waitForSelector('.memory button[name="working-memory"]');
    // the browser logs no 404 for the conversation without working memory: nothing asked for it
    await page.click(`.conversations [data-conversation-id="${written}"] a`);
    await page.waitForSelector(`.conv-messages [data-message-id]`);
    expect(asked).toEqual([]);
    await page.click('.memory button[name="working-memory"]');
    expect(await (await page.waitForSelector('.working-memory pre')).textContent()).toBe('# Facts\n- likes tea');
    expect(asked).toEqual([`/api/memory/conversations/${written}/working-memory`]);
    await closeClean(w);
  });

  it('says working memory is off for an agent without it and never asks the server for it', async () => {
    const conv = await savedConversation('notes', 'notes-user', 1, 'Notes chat');
    const asked: string[] = [];
    const w = await openWatchedPage(browser, t.url, '', { goto: false });
    w.page.on('request', (req) => {
      if (req.url().includes('/working-memory')) asked.push(req.url());
    });
    await w.page.goto(`${t.url}/console?view=agents&agent=notes&user=notes-user&conv=${conv}`);
    await w.page.waitForSelector('.conv-messages [data-message-id]');
    expect(await w.page.textContent('.memory')).toContain('Working memory is off for Notes');
    expect(await w.page.$('.memory button[name="working-memory"]')).toBeNull();
    expect(asked).toEqual([]);
    await closeClean(w);
  });
});
