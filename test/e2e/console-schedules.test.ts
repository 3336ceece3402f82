/**
 * The Schedules view of the console, in a real headless Chromium against a real server (uWS, LevelDB in a temp
 * dir): it lists the config's schedules with their state and next run, Pause and Resume change the schedule for the
 * server (and the row follows), and Run now starts one execution and links to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { echoWorkflow } from '../../examples/workflows/index.js';
import { buildConsole } from '../../scripts/build-console.mjs';
import { CHROMIUM_ARGS, ensureChromium } from '../helpers/chromium.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { closeClean, openWatchedPage } from '../helpers/console-page.js';
import { until } from '../helpers/until.js';

let t: TestServer;
let browser: Browser;

beforeAll(async () => {
  await buildConsole();
  const executablePath = ensureChromium();
  t = await startTestServer({
    workflows: [echoWorkflow],
    schedules: [{ id: 'nightly', workflow: 'echo', cron: '0 3 * * *', timezone: 'Europe/Oslo', input: { text: 'night' } }],
  });
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const serverState = async () => (await api(`${t.url}/schedules`)).body.data[0];

describe('the Schedules view', () => {
  it('is linked from the top bar and lists each schedule with its workflow, cron, zone, state and next run', async () => {
    const w = await openWatchedPage(browser, t.url, '/console');
    const { page } = w;
    await page.click('nav a:has-text("Schedules")');
    const row = page.locator('tr[data-schedule-id="nightly"]');
    await row.waitFor();
    expect(await row.locator('td').nth(1).textContent()).toBe('echo');
    expect(await row.locator('td').nth(2).textContent()).toBe('0 3 * * * (Europe/Oslo)');
    expect(await row.locator('[data-state]').textContent()).toBe('active');
    expect(await row.locator('[data-next-run]').textContent()).not.toBe('—');
    expect(await row.locator('[data-last-run]').textContent()).toBe('—');
    await closeClean(w);
  });

  it('pauses and resumes the schedule on the server, the row following', async () => {
    const w = await openWatchedPage(browser, t.url, '/console?view=schedules');
    const { page } = w;
    await page.click('tr[data-schedule-id="nightly"] button[name="pause"]');
    await page.waitForSelector('tr[data-schedule-id="nightly"][data-paused="true"]');
    expect(await serverState()).toMatchObject({ paused: true, nextRunAt: null });
    expect(await page.locator('tr[data-schedule-id="nightly"] [data-state]').textContent()).toBe('paused');

    await page.click('tr[data-schedule-id="nightly"] button[name="resume"]');
    await page.waitForSelector('tr[data-schedule-id="nightly"][data-paused="false"]');
    expect((await serverState()).paused).toBe(false);
    await closeClean(w);
  });

  it('starts one execution with Run now and links to it', async () => {
    const w = await openWatchedPage(browser, t.url, '/console?view=schedules');
    const { page } = w;
    await page.click('tr[data-schedule-id="nightly"] button[name="trigger"]');
    const link = page.locator('tr[data-schedule-id="nightly"] [data-triggered] a');
    await link.waitFor();
    const executionId = await until(async () => (await serverState()).lastExecutionId, 'the triggered execution');
    expect(executionId).toMatch(/^sched-nightly-trigger-/);
    expect(await link.getAttribute('href')).toBe(`/console?run=${executionId}&wf=echo`);
    const runs = (await api(`${t.url}/workflows/executions?metadata.scheduleId=nightly`)).body.data;
    expect(runs.map((r: { id: string }) => r.id)).toEqual([executionId]);
    // the last run column links the same execution once the list is read again
    await page.waitForSelector(`tr[data-schedule-id="nightly"] [data-last-run] a[title="${executionId}"]`);
    await closeClean(w);
  });
});
