/**
 * The console's shell and run views in a real headless Chromium against a real server (uWS, LevelDB in a temp
 * dir): what "live paused" says is waiting, the sign-in button only where auth is on, the resume form generated
 * from the schema whatever order the run's records arrive in, and the event store's health in the top bar.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { z } from 'zod';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';
import { buildConsole } from '../../scripts/build-console.mjs';
import { CHROMIUM_ARGS, ensureChromium } from '../helpers/chromium.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { closeClean, openWatchedPage } from '../helpers/console-page.js';

type X = { x: number };
const pipeline = createWorkflow(
  { id: 'pipeline', name: 'Pipeline', input: z.object({ x: z.number() }) },
  andThen({ id: 'double', execute: ({ data }) => ({ x: (data as X).x * 2 }) }),
  andThen({ id: 'add-ten', execute: ({ data }) => ({ x: (data as X).x + 10 }) }),
  andThen({ id: 'describe', execute: ({ data }) => ({ text: `x=${(data as X).x}` }) }),
);
const decision = z.object({ approved: z.boolean(), comment: z.string().min(3) });
const review = createWorkflow(
  { id: 'review', name: 'Review', resumeSchema: decision },
  andThen({ id: 'prepare', execute: () => ({ doc: 'draft' }) }),
  andThen({
    id: 'decide',
    resumeSchema: decision,
    execute: ({ data, resumeData, suspend }) => {
      if (resumeData === undefined) suspend('needs a reviewer', data);
      return { ...(data as object), ...(resumeData as object) };
    },
  }),
);

let t: TestServer;
let browser: Browser;
const post = (path: string, json: unknown = {}) => api(`${t.url}${path}`, { method: 'POST', json });
const openPage = (path: string, base = t.url) => openWatchedPage(browser, base, path);

beforeAll(async () => {
  await buildConsole();
  const executablePath = ensureChromium();
  t = await startTestServer({ workflows: [pipeline, review] });
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the paused runs list', () => {
  it('counts the runs that changed while paused, not the span events that told it so', async () => {
    const w = await openPage('/console');
    const { page } = w;
    await page.waitForSelector('[data-feed="live"]');
    await page.click('button.pause');
    await page.waitForSelector('[data-feed="paused"]');
    // each run reports several span starts and ends (the run and each of its three steps)
    expect((await post('/workflows/pipeline/execute', { input: { x: 1 }, options: { executionId: 'paused-a' } })).body.data.status).toBe('completed');
    await page.waitForSelector('[data-feed="paused"]:has-text("1 run changed")');
    expect((await post('/workflows/pipeline/execute', { input: { x: 2 }, options: { executionId: 'paused-b' } })).body.data.status).toBe('completed');
    await page.waitForSelector('[data-feed="paused"]:has-text("2 runs changed")');
    expect(await page.textContent('[data-feed="paused"]')).toBe('live paused · 2 runs changed');
    await page.click('button.pause');
    await page.waitForSelector('[data-execution-id="paused-b"][data-status="completed"]');
    expect(await page.textContent('[data-feed]')).toBe('live');
    await closeClean(w);
  });

  it('says “1 run” under a list of one', async () => {
    expect((await post('/workflows/pipeline/execute', { input: { x: 3 }, options: { executionId: 'single-run-1' } })).status).toBe(200);
    const w = await openPage('/console?q=single-run-1');
    await w.page.waitForSelector('[data-execution-id="single-run-1"]');
    expect(await w.page.textContent('.pager span')).toBe('page 1 of 1 · 1 run');
    await closeClean(w);
  });
});

describe('the sign-in button', () => {
  it('is absent when the server has no auth, and offered when JWT auth is on', async () => {
    const w = await openPage('/console');
    await w.page.waitForSelector('.app[data-auth="off"]');
    await w.page.waitForSelector('[data-feed="live"]');
    expect(await w.page.$('button[name="sign-in"]')).toBeNull();
    await closeClean(w);

    const authed = await startTestServer({ workflows: [pipeline], auth: { secret: 'console-runs-secret-that-is-long-enough' } });
    try {
      const a = await openPage('/console', authed.url);
      await a.page.waitForSelector('.app[data-auth="on"]');
      expect(await a.page.textContent('button[name="sign-in"]')).toBe('Sign in');
      await a.page.click('button[name="sign-in"]');
      await a.page.waitForSelector('form[name="credentials"]');
      await closeClean(a);
    } finally {
      await authed.close();
    }
  });
});

/** Holds the answer to the workflow's definition until the browser has the run's state record. */
async function definitionAfterState(page: Page, wf: string, runIs: (id: string) => boolean): Promise<void> {
  let stateArrived!: () => void;
  const arrived = new Promise<void>((r) => (stateArrived = r));
  page.on('response', (res) => {
    const m = /\/workflows\/[^/]+\/executions\/([^/]+)\/state$/.exec(new URL(res.url()).pathname);
    if (m && runIs(decodeURIComponent(m[1]))) stateArrived();
  });
  await page.route(
    (url) => url.pathname === `/workflows/${wf}`,
    async (route) => {
      await arrived;
      await route.continue();
    },
  );
}

describe('the resume form', () => {
  it('shows the fields generated from the resume schema after “Replay from this step”, even when the definition arrives last', async () => {
    expect((await post('/workflows/review/execute', { options: { executionId: 'race-src' } })).body.data.status).toBe('suspended');
    expect((await post('/workflows/review/executions/race-src/resume', { resumeData: { approved: true, comment: 'fine' } })).body.data.status).toBe('completed');
    const w = await openPage('/console?run=race-src&wf=review&step=decide');
    const { page } = w;
    await page.waitForSelector('[data-inspected-step="decide"]:has-text("draft")');
    await page.click('details.replay summary');
    await definitionAfterState(page, 'review', (id) => id !== 'race-src');
    await page.click('form[name="replay"] button[type="submit"]');
    await page.waitForFunction(() => !new URL((globalThis as any).location.href).searchParams.get('run')?.startsWith('race-src'));
    const replayId = new URL(page.url()).searchParams.get('run')!;
    await page.waitForSelector('[data-run-status="suspended"]');
    await page.waitForSelector('form[name="resume"] input[type="checkbox"][name="approved"]', { timeout: 5_000 });
    expect(await page.isChecked('form[name="resume"] input[name="raw-json"]')).toBe(false);
    expect(await page.$('form[name="resume"] textarea[name="raw"]')).toBeNull();
    await page.check('form[name="resume"] input[name="approved"]');
    await page.fill('form[name="resume"] input[name="comment"]', 'replayed and approved');
    await page.click('form[name="resume"] button[type="submit"]');
    await page.waitForSelector('[data-run-status="completed"]');
    const state = (await api(`${t.url}/workflows/review/executions/${replayId}/state`)).body.data;
    expect(state.output).toEqual({ doc: 'draft', approved: true, comment: 'replayed and approved' });
    await closeClean(w);
  });

  it('shows the generated fields in a fresh tab on a suspended run whose definition answers after its state', async () => {
    expect((await post('/workflows/review/execute', { options: { executionId: 'race-fresh' } })).body.data.status).toBe('suspended');
    const w = await openWatchedPage(browser, t.url, '', { goto: false });
    const { page } = w;
    await definitionAfterState(page, 'review', (id) => id === 'race-fresh');
    await page.goto(`${t.url}/console?run=race-fresh&wf=review`);
    await page.waitForSelector('[data-run-status="suspended"]');
    await page.waitForSelector('form[name="resume"] input[type="checkbox"][name="approved"]', { timeout: 5_000 });
    expect(await page.isChecked('form[name="resume"] input[name="raw-json"]')).toBe(false);
    await closeClean(w);
  });
});

describe('the resume form without the definition', () => {
  it('falls back to raw JSON when the workflow definition cannot be read, and still resumes', async () => {
    expect((await post('/workflows/review/execute', { options: { executionId: 'no-def' } })).body.data.status).toBe('suspended');
    const w = await openWatchedPage(browser, t.url, '', { goto: false });
    const { page } = w;
    await page.route(
      (url) => url.pathname === '/workflows/review',
      (route) => route.fulfill({ status: 503, json: { success: false, error: 'Event store unavailable: test' } }),
    );
    await page.goto(`${t.url}/console?run=no-def&wf=review`);
    await page.waitForSelector('[data-run-status="suspended"]');
    await page.fill('form[name="resume"] textarea[name="raw"]', '{"approved": true, "comment": "without a schema"}', { timeout: 5_000 });
    await page.click('form[name="resume"] button[type="submit"]');
    await page.waitForSelector('[data-run-status="completed"]');
    expect((await api(`${t.url}/workflows/review/executions/no-def/state`)).body.data.output).toEqual({ doc: 'draft', approved: true, comment: 'without a schema' });
    await closeClean(w, { expectedFailures: [/^503 \/workflows\/review$/] });
  });
});

describe('the event store’s health', () => {
  /** Answers the status route with the server's own answer plus `store` (or without it when undefined). */
  async function statusWithStore(page: Page, store: unknown) {
    await page.route('**/observability/status', async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      delete body.data.store;
      if (store !== undefined) body.data.store = store;
      await route.fulfill({ response: res, json: body });
    });
  }

  it('shows an unavailable store in the top bar with its reason and since when', async () => {
    const w = await openWatchedPage(browser, t.url, '', { goto: false });
    const { page } = w;
    await statusWithStore(page, { kind: 'level', state: 'unavailable', since: '2026-11-27T13:40:05.000Z', reason: 'IO error: disk detached' });
    await page.goto(`${t.url}/console`);
    const badge = await page.waitForSelector('.top .store-health[data-store-state="unavailable"]');
    const text = (await badge.textContent())!;
    expect(text).toContain('Event store unavailable');
    expect(text).toContain('IO error: disk detached');
    expect(await badge.getAttribute('role')).toBe('alert');
    expect(await badge.getAttribute('title')).toContain(new Date('2026-11-27T13:40:05.000Z').toLocaleString());
    await closeClean(w);
  });

  it('lists stuck runs beside the store health, each a link to its run with its reason', async () => {
    const w = await openWatchedPage(browser, t.url, '', { goto: false });
    const { page } = w;
    await page.route('**/observability/status', async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      expect(body.data.stuckExecutions).toEqual([]);
      body.data.stuckExecutions = [
        { executionId: 'ex-stuck', workflowId: 'review', status: 'running', since: '2026-11-27T13:40:05.000Z', reason: "step 'draft' sleeps on 'draft' with no timer armed" },
      ];
      await route.fulfill({ response: res, json: body });
    });
    await page.goto(`${t.url}/console`);
    const badge = await page.waitForSelector('.top .stuck-runs[data-stuck-count="1"]');
    expect(await badge.getAttribute('role')).toBe('alert');
    await page.click('.stuck-runs summary');
    expect(await page.textContent('.stuck-runs summary')).toBe('1 stuck run');
    expect(await page.textContent('.stuck-runs .stuck-reason')).toContain("step 'draft' sleeps on 'draft' with no timer armed");
    await page.click('.stuck-runs a');
    await page.waitForFunction(() => (globalThis as any).location.search.includes('run=ex-stuck'));
    await closeClean(w, { expectedFailures: [/ex-stuck/] });
  });

  it('shows a full store, a healthy one quietly, and nothing when the server reports no store', async () => {
    const cases: Array<[unknown, string | null]> = [
      [{ kind: 'pg', state: 'full', since: '2026-11-27T13:41:00.000Z', reason: 'could not extend file' }, 'full'],
      [{ kind: 'memory', state: 'ok', since: '2026-11-27T13:00:00.000Z' }, 'ok'],
      [undefined, null],
    ];
    for (const [store, state] of cases) {
      const w = await openWatchedPage(browser, t.url, '', { goto: false });
      const { page } = w;
      await statusWithStore(page, store);
      const answered = page.waitForResponse((r) => r.url().endsWith('/observability/status'));
      await page.goto(`${t.url}/console`);
      await answered;
      await page.waitForSelector('[data-feed="live"]');
      if (state === null) {
        await page.waitForSelector('.app[data-store-checked="true"]');
        expect(await page.$('.store-health')).toBeNull();
      } else {
        const badge = await page.waitForSelector(`.top .store-health[data-store-state="${state}"]`);
        if (state === 'full') expect(await badge.textContent()).toContain('Event store full');
        else expect(await badge.textContent()).toBe('store ok');
      }
      await closeClean(w);
    }
  });
});
