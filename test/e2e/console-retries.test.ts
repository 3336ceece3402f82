/**
 * The console's run timeline in a real headless Chromium against a real server: a step retried by
 * its `retry` policy shows one bar per attempt, a tag with the number of attempts, and in the step
 * inspector each attempt with its status, its error and when its retry ran.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';
import { buildConsole } from '../../scripts/build-console.mjs';
import { CHROMIUM_ARGS, ensureChromium } from '../helpers/chromium.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { closeClean, openWatchedPage } from '../helpers/console-page.js';

const runs = new Map<string, number>();
const flaky = createWorkflow(
  { id: 'flaky-console' },
  andThen({ id: 'prepare', execute: () => ({ ok: true }) }),
  andThen({
    id: 'charge',
    retry: { attempts: 3, backoff: { initialMs: 50 } },
    execute: ({ executionId }) => {
      const n = (runs.get(executionId) ?? 0) + 1;
      runs.set(executionId, n);
      if (n <= 2) throw new Error(`gateway down (run ${n})`);
      return { charged: true };
    },
  }),
);

let t: TestServer;
let browser: Browser;

beforeAll(async () => {
  await buildConsole();
  const executablePath = ensureChromium();
  t = await startTestServer({ workflows: [flaky] });
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

it('shows each attempt of a retried step on the timeline and in its inspector', async () => {
  const r = await api(`${t.url}/workflows/flaky-console/execute`, { method: 'POST', json: { options: { executionId: 'retried-run' } } });
  expect(r.body.data.status).toBe('completed');
  const w = await openWatchedPage(browser, t.url, '/console?run=retried-run&wf=flaky-console&step=charge');
  const { page } = w;
  await page.waitForSelector('[data-step-id="charge"] [data-attempts="3"]');
  expect(await page.textContent('[data-step-id="charge"] [data-attempts]')).toBe('3 attempts');
  const bars = await page.$$eval('[data-step-id="charge"] .g-bar', (els) => els.map((e) => [e.getAttribute('data-attempt'), e.className]));
  expect(bars.map(([a]) => a)).toEqual(['1', '2', '3']);
  expect(bars.map(([, c]) => c!.includes('status-error'))).toEqual([true, true, false]);
  // a step that ran once keeps its one bar and no tag
  expect(await page.$$('[data-step-id="prepare"] .g-bar')).toHaveLength(1);
  expect(await page.$('[data-step-id="prepare"] [data-attempts]')).toBeNull();
  await page.waitForSelector('[data-inspected-step="charge"] ol.attempts');
  const items = await page.$$eval('[data-inspected-step="charge"] ol.attempts li', (els) => els.map((e) => e.textContent!.replace(/\s+/g, ' ').trim()));
  expect(items).toHaveLength(3);
  expect(items[0]).toMatch(/^Attempt 1: error · .* · gateway down \(run 1\) · retry at /);
  expect(items[1]).toMatch(/^Attempt 2: error · .* · gateway down \(run 2\) · retry at /);
  expect(items[2]).toMatch(/^Attempt 3: success/);
  await closeClean(w);
}, 120_000);
