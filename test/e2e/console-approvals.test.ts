/**
 * Tool approvals and failed tools in the console, in a real headless Chromium against a real server (uWS, LevelDB in
 * a temp dir): a run waiting for approval shows up in the agents view (and as a badge on the Agents link) without a
 * reload, Approve runs the tool and Deny records the denial through the approval route, and a tool that threw shows
 * as failed when the chat is loaded from stored memory, as it does in the live stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { z } from 'zod';
import { assistantAgent } from '../../examples/agents/assistant.js';
import { createAgent } from '../../src/agents/define-agent.js';
import { createTool } from '../../src/kernel/define-tool.js';
import { agentMemory } from '../../src/memory/agent-memory.js';
import { buildConsole } from '../../scripts/build-console.mjs';
import { CHROMIUM_ARGS, ensureChromium } from '../helpers/chromium.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { closeClean, openWatchedPage } from '../helpers/console-page.js';

const brokenWeather = createTool({
  name: 'getWeather',
  description: 'Current weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: () => {
    throw new Error('weather service down');
  },
});
const unlucky = createAgent({ id: 'unlucky', name: 'Unlucky', instructions: 'Try the weather.', tools: [brokenWeather], memory: agentMemory() });

let t: TestServer;
let browser: Browser;

beforeAll(async () => {
  await buildConsole();
  const executablePath = ensureChromium();
  t = await startTestServer({ agents: [assistantAgent, unlucky] });
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A run of the example assistant that waits for approval of one `issueRefund` call. */
async function waitingRefund(orderId: string, amount: number) {
  const r = await api(`${t.url}/agents/assistant/text`, { method: 'POST', json: { input: `Please refund orderId ${orderId} amount ${amount}` } });
  expect(r.body.data).toMatchObject({ status: 'awaiting-approval' });
  const { runId, pendingApprovals } = r.body.data;
  return { runId: runId as string, approvalId: pendingApprovals[0].approvalId as string };
}

const historyEntry = async (agent: string, runId: string) => (await api(`${t.url}/agents/${agent}/history?limit=100`)).body.data.entries.find((e: { id: string }) => e.id === runId);

describe('pending tool approvals', () => {
  it('appear on the open agents view with tool, arguments, agent and run, and as a count on the Agents link', async () => {
    const w = await openWatchedPage(browser, t.url, '/console?view=agents&agent=unlucky');
    const { page } = w;
    await page.waitForSelector('.chat');
    // the run starts after the page has loaded: the panel picks it up without a reload
    const { runId, approvalId } = await waitingRefund('7001', 40);
    const item = await page.waitForSelector(`.approvals li.approval[data-approval-id="${approvalId}"]`, { timeout: 15_000 });
    expect(await item.$eval('[data-tool-name]', (el: any) => el.textContent)).toBe('issueRefund');
    expect(await item.$eval('[data-agent-id]', (el: any) => el.textContent)).toBe('Assistant');
    expect(await item.getAttribute('data-run-id')).toBe(runId);
    expect(await item.$eval('a', (el: any) => el.getAttribute('href'))).toContain(`agentRun=${runId}`);
    const text = await item.textContent();
    expect(text).toContain('7001');
    expect(text).toContain('40');
    expect(await page.textContent('.top nav [data-pending-approvals]')).toBe(await page.$$eval('.approvals li.approval', (l) => String(l.length)));
    // the badge is on the runs view too
    await page.click('.top nav a:text("Runs")');
    await page.waitForSelector('.top nav [data-pending-approvals]');
    await closeClean(w);
  });

  it('Approve runs the tool, the item goes away and the run’s answer is shown', async () => {
    const { runId, approvalId } = await waitingRefund('7002', 25);
    const w = await openWatchedPage(browser, t.url, '/console?view=agents&agent=assistant');
    const { page } = w;
    await page.click(`.approvals li.approval[data-approval-id="${approvalId}"] button[name="approve"]`);
    const decided = await page.waitForSelector(`.approvals .decided li[data-approval-id="${approvalId}"]`, { timeout: 15_000 });
    expect(await decided.getAttribute('data-decision')).toBe('approved');
    expect(await decided.getAttribute('data-outcome')).toBe('completed');
    expect(await decided.$eval('[data-outcome-text]', (el: any) => el.textContent)).toContain('issueRefund returned');
    expect(await page.$(`.approvals li.approval[data-approval-id="${approvalId}"]`)).toBeNull();
    // the run really ran the tool, and a later poll does not bring the item back
    const entry = await historyEntry('assistant', runId);
    expect(entry.status).toBe('completed');
    expect(entry.output).toBe('issueRefund returned {"orderId":"7002","amount":25,"refunded":true}.');
    expect(await decided.$eval('[data-outcome-text]', (el: any) => el.textContent)).toBe(entry.output);
    // the list is read again after the decision (the entry may read `working` a moment longer): the item stays gone
    await page.waitForResponse((res) => res.url().includes('/agents/assistant/history'), { timeout: 10_000 });
    await page.waitForResponse((res) => res.url().includes('/agents/assistant/history'), { timeout: 10_000 });
    expect(await page.$(`.approvals li.approval[data-approval-id="${approvalId}"]`)).toBeNull();
    await closeClean(w);
  });

  it('Deny with a reason records the denial: the tool does not run and the model is told why', async () => {
    const { runId, approvalId } = await waitingRefund('7003', 900);
    const w = await openWatchedPage(browser, t.url, '/console?view=agents&agent=assistant');
    const { page } = w;
    const sel = `.approvals li.approval[data-approval-id="${approvalId}"]`;
    await page.click(`${sel} button[name="deny"]`);
    await page.fill(`${sel} input[name="reason"]`, 'over the refund limit');
    await page.click(`${sel} button[name="confirm-deny"]`);
    const decided = await page.waitForSelector(`.approvals .decided li[data-approval-id="${approvalId}"]`, { timeout: 15_000 });
    expect(await decided.getAttribute('data-decision')).toBe('denied');
    expect(await decided.textContent()).toContain('over the refund limit');
    expect(await page.$(sel)).toBeNull();
    const entry = await historyEntry('assistant', runId);
    expect(entry.status).toBe('completed');
    expect(entry.output).not.toContain('refunded');
    expect(await decided.$eval('[data-outcome-text]', (el: any) => el.textContent)).toBe(entry.output);
    expect(entry.output).toContain('over the refund limit');
    await closeClean(w);
  });

  it('shows a chat’s call of a tool that needs approval as waiting, and lists it in the panel', async () => {
    const w = await openWatchedPage(browser, t.url, '/console?view=agents&agent=assistant');
    const { page } = w;
    await page.fill('input[name="message"]', 'Please refund orderId 7004 amount 12');
    await page.click('form.composer button[type="submit"]');
    await page.waitForSelector('.chat .msg-assistant[data-done="true"]', { timeout: 15_000 });
    const card = (await page.$('.chat .tool-card[data-tool-name="issueRefund"]'))!;
    expect(await card.$eval('[data-tool-state]', (el: any) => el.textContent)).toBe('waiting for approval');
    const item = await page.waitForSelector('.approvals li.approval:has-text("7004")', { timeout: 15_000 });
    expect(await item.$eval('[data-tool-name]', (el: any) => el.textContent)).toBe('issueRefund');
    await closeClean(w);
  });
});

describe('a failed tool in a chat loaded from memory', () => {
  it('shows as failed with its error message, as the live stream shows it', async () => {
    const r = await api(`${t.url}/agents/unlucky/text`, { method: 'POST', json: { input: 'What is the weather in Paris?', options: { memory: { userId: 'u1', conversationId: 'broken-weather' } } } });
    expect(r.body.data.toolResults[0]).toMatchObject({ type: 'tool-error', error: 'weather service down' });
    const w = await openWatchedPage(browser, t.url, '/console?view=agents&agent=unlucky&user=u1&conv=broken-weather');
    const { page } = w;
    const card = await page.waitForSelector('.chat .tool-card[data-tool-name="getWeather"]', { timeout: 15_000 });
    await page.waitForSelector('.chat .msg-assistant:has-text("getWeather failed")');
    expect(await card.$eval('[data-tool-state]', (el: any) => el.textContent)).toBe('failed');
    expect(await card.getAttribute('class')).toContain('tool-error');
    expect(await card.$eval('.error', (el: any) => el.textContent)).toBe('weather service down');
    // the live chat says the same for the same failure
    await page.fill('input[name="message"]', 'What is the weather in Rome?');
    await page.click('form.composer button[type="submit"]');
    // the message loaded from memory matches too: wait for the live one beside it
    await page.waitForFunction(
      () => [...(globalThis as any).document.querySelectorAll('.chat .msg-assistant[data-done="true"]')].filter((m: any) => m.textContent.includes('getWeather failed')).length === 2,
      undefined,
      {
        timeout: 15_000,
      },
    );
    const states = await page.$$eval('.chat .tool-card[data-tool-name="getWeather"] [data-tool-state]', (l) => l.map((el: any) => el.textContent));
    expect(states).toEqual(['failed', 'failed']);
    await closeClean(w);
  });
});
