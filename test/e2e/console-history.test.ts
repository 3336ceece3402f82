/**
 * The History view of the console, in a real headless Chromium against real servers (uWS, LevelDB in a temp dir):
 * it shows the size of the history (executions and agent runs kept, records, bytes on disk) and the retention
 * policy in effect for each workflow and agent, the archive and the last pass; a server without a retention
 * section is shown keeping everything. An agent run retention removed says so when its link is opened.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { createAgent } from '../../src/agents/define-agent.js';
import { echoWorkflow } from '../../examples/workflows/index.js';
import { buildConsole } from '../../scripts/build-console.mjs';
import { CHROMIUM_ARGS, ensureChromium } from '../helpers/chromium.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { closeClean, openWatchedPage } from '../helpers/console-page.js';
import { until } from '../helpers/until.js';

const assistant = createAgent({ id: 'assistant', name: 'Assistant', instructions: 'Be brief.' });
const planner = createAgent({ id: 'planner', name: 'Planner', instructions: 'Plan.' });
const tmp = mkdtempSync(path.join(os.tmpdir(), 'eventloom-console-history-'));
const archive = path.join(tmp, 'archive');
let kept: TestServer;
let pruned: TestServer;
let browser: Browser;
const assistantRuns: string[] = [];

beforeAll(async () => {
  await buildConsole();
  const executablePath = ensureChromium();
  kept = await startTestServer({ workflows: [echoWorkflow], agents: [assistant] });
  pruned = await startTestServer({
    workflows: [echoWorkflow],
    agents: [assistant, planner],
    retention: { keepFor: '30d', archive, every: '200ms', workflows: { echo: { keepNewest: 1 } }, agents: { assistant: { keepNewest: 1 }, planner: false } },
  });
  for (const text of ['a', 'b', 'c']) await api(`${pruned.url}/workflows/echo/execute`, { method: 'POST', json: { input: { text } } });
  for (const input of ['one', 'two']) {
    await api(`${pruned.url}/agents/assistant/text`, { method: 'POST', json: { input } });
    assistantRuns.push((await api(`${pruned.url}/agents/assistant/history?limit=1`)).body.data.entries[0].id);
  }
  await api(`${pruned.url}/agents/planner/text`, { method: 'POST', json: { input: 'plan' } });
  await api(`${kept.url}/agents/assistant/text`, { method: 'POST', json: { input: 'hello' } });
  await until(async () => (await api(`${pruned.url}/agents/assistant/history`)).body.data.pagination.total === 1, 'the pass to remove the older assistant run', 20_000);
  await until(async () => (await api(`${pruned.url}/workflows/executions?workflowId=echo`)).body.total === 1, 'the pass to remove the older echo executions', 20_000);
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await kept?.close();
  await pruned?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('the History view', () => {
  it('is linked from the top bar and says that a server without retention keeps everything', async () => {
    const w = await openWatchedPage(browser, kept.url, '/console');
    const { page } = w;
    await page.click('nav a:has-text("History")');
    await page.waitForSelector('[data-retention="off"]');
    expect(await page.locator('[data-retention-summary]').textContent()).toBe('No retention is configured: every execution and agent run is kept.');
    expect(await page.locator('[data-agent-runs]').textContent()).toBe('1 agent run(s)');
    expect(await page.locator('[data-executions]').textContent()).toBe('0 execution(s)');
    expect(await page.locator('[data-stored-bytes]').textContent()).toMatch(/^\d+(\.\d)? (B|KiB|MiB) on disk$/);
    const row = page.locator('tr[data-policy-of="agent:assistant"]');
    expect(await row.locator('[data-kept]').textContent()).toBe('1');
    expect(await row.locator('[data-policy]').textContent()).toBe('keeps all');
    expect(await page.locator('tr[data-policy-of="workflow:echo"] [data-source]').textContent()).toBe('not configured');
    await closeClean(w);
  });

  it("shows each workflow's and agent's policy in effect, what is kept, the archive and the last pass", async () => {
    const w = await openWatchedPage(browser, pruned.url, '/console?view=history');
    const { page } = w;
    await page.waitForSelector('[data-retention="on"] [data-last-pass]');
    const lastPass = page.locator('[data-last-pass]');
    expect(await lastPass.getAttribute('data-last-pass'), (await lastPass.textContent()) ?? '').toBe('ran');
    expect(await page.locator('[data-global]').textContent()).toBe('ended within 30 d');
    expect(await page.locator('[data-every]').textContent()).toBe('every 200 ms');
    expect(await page.locator('[data-tombstones]').textContent()).toBe('a removed one answers 404 naming its removal for 7 d');
    expect(await page.locator('[data-archive]').textContent()).toBe(archive);
    expect(await page.locator('[data-executions]').textContent()).toBe('1 execution(s)');
    expect(await page.locator('[data-agent-runs]').textContent()).toBe('2 agent run(s)');
    expect(await page.locator('[data-removed]').textContent()).toMatch(/^\d+ removed by retention$/);
    const cells = async (id: string) => {
      const row = page.locator(`tr[data-policy-of="${id}"]`);
      return [await row.locator('[data-kept]').textContent(), await row.locator('[data-policy]').textContent(), await row.locator('[data-source]').textContent()];
    };
    expect(await cells('workflow:echo')).toEqual(['1', 'newest 1', 'own policy']);
    expect(await cells('agent:assistant')).toEqual(['1', 'newest 1', 'own policy']);
    expect(await cells('agent:planner')).toEqual(['1', 'keeps all', 'own policy']);
    await closeClean(w);
  });

  it('opens a kept agent run, and says of a removed one that retention removed it', async () => {
    const w = await openWatchedPage(browser, pruned.url, `/console?agent=assistant&agentRun=${assistantRuns[1]}`);
    const { page } = w;
    await page.waitForSelector('[data-run-status="completed"]');
    await page.goto(`${pruned.url}/console?agent=assistant&agentRun=${assistantRuns[0]}`);
    const missing = page.locator('[data-run-missing]');
    await missing.waitFor();
    expect(await missing.textContent()).toMatch(new RegExp(`^Agent run ${assistantRuns[0]} not found \\(removed by retention at \\d{4}-`));
    await closeClean(w, { expectedFailures: [/^404 \/agents\/assistant\/runs\//] });
  });
});
