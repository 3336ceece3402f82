/**
 * Durable sleep on the real server (LevelDB): andSleep and andSleepUntil complete at their due
 * time, the state shows what the execution waits for, and suspend, resume and cancel work while it
 * sleeps (a resumed sleep keeps its due time).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import config from '../fixtures/durable-waits.config.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer(config);
});
afterAll(async () => {
  await t?.close();
});

const stateOf = async (workflow: string, id: string) => (await api(`${t.url}/workflows/${workflow}/executions/${id}/state`)).body.data;

async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('a sleep completes at its due time and shows what it waits for meanwhile', async () => {
  const started = Date.now();
  const call = api(`${t.url}/workflows/nap/execute`, { method: 'POST', json: { input: { ms: 600 }, options: { executionId: 'nap-1' } } });
  const waiting = await until(
    () => stateOf('nap', 'nap-1'),
    (s) => s?.waitingFor !== undefined,
  );
  expect(waiting.status).toBe('running');
  expect(waiting.waitingFor.kind).toBe('sleep');
  const due = Date.parse(waiting.waitingFor.until);
  expect(due - started).toBeGreaterThanOrEqual(550);
  // the executions list shows it too
  const list = await api(`${t.url}/workflows/executions?workflowId=nap&status=running`);
  expect(list.body.data.find((row: any) => row.id === 'nap-1')?.waitingFor).toEqual(waiting.waitingFor);
  const r = await call;
  expect(r.status).toBe(200);
  expect(r.body.data.status).toBe('completed');
  expect(r.body.data.result.wokeAt).toBeGreaterThanOrEqual(due);
  const done = await stateOf('nap', 'nap-1');
  expect(done.waitingFor).toBeUndefined();
  const types = done.events.map((e: any) => e.type);
  expect(types.filter((x: string) => x === 'step-waiting')).toHaveLength(1);
  expect(types.filter((x: string) => x === 'step-wait-fired')).toHaveLength(1);
});

it('a sleep until a date completes at that date, and at once when the date is past', async () => {
  const at = new Date(Date.now() + 400).toISOString();
  const r = await api(`${t.url}/workflows/wake-at/execute`, { method: 'POST', json: { input: { at } } });
  expect(r.body.data.status).toBe('completed');
  expect(r.body.data.result.wokeAt).toBeGreaterThanOrEqual(Date.parse(at));
  const past = await api(`${t.url}/workflows/wake-at/execute`, { method: 'POST', json: { input: { at: '2001-01-01T00:00:00Z' } } });
  expect(past.body.data.status).toBe('completed');
});

it('a sleep suspended and resumed keeps its due time; resumed after it, it completes at once', async () => {
  const call = api(`${t.url}/workflows/nap/execute`, { method: 'POST', json: { input: { ms: 700 }, options: { executionId: 'nap-2' } } });
  const waiting = await until(
    () => stateOf('nap', 'nap-2'),
    (s) => s?.waitingFor !== undefined,
  );
  const due = Date.parse(waiting.waitingFor.until);
  const s = await api(`${t.url}/workflows/nap/executions/nap-2/suspend`, { method: 'POST', json: { reason: 'hold on' } });
  expect(s.status).toBe(200);
  expect((await call).body.data.status).toBe('suspended');
  const suspended = await stateOf('nap', 'nap-2');
  expect(suspended.status).toBe('suspended');
  expect(suspended.waitingFor).toBeUndefined();
  // resumed before the due time: it still wakes at the due time, not 700 ms after the resume
  await new Promise((r) => setTimeout(r, 200));
  const resumed = await api(`${t.url}/workflows/nap/executions/nap-2/resume`, { method: 'POST', json: {} });
  expect(resumed.body.data.status).toBe('completed');
  const woke = resumed.body.data.result.wokeAt;
  expect(woke).toBeGreaterThanOrEqual(due);
  expect(woke).toBeLessThan(due + 400);

  const call3 = api(`${t.url}/workflows/nap/execute`, { method: 'POST', json: { input: { ms: 300 }, options: { executionId: 'nap-3' } } });
  await until(
    () => stateOf('nap', 'nap-3'),
    (st) => st?.waitingFor !== undefined,
  );
  await api(`${t.url}/workflows/nap/executions/nap-3/suspend`, { method: 'POST', json: {} });
  await call3;
  await new Promise((r) => setTimeout(r, 450));
  const before = Date.now();
  const late = await api(`${t.url}/workflows/nap/executions/nap-3/resume`, { method: 'POST', json: {} });
  expect(late.body.data.status).toBe('completed');
  expect(Date.now() - before).toBeLessThan(250);
  const events = (await stateOf('nap', 'nap-3')).events.map((e: any) => e.type);
  expect(events.filter((x: string) => x === 'step-waiting')).toHaveLength(1);
  expect(events.filter((x: string) => x === 'step-wait-fired')).toHaveLength(1);
});

it('a sleep cancelled never fires', async () => {
  const call = api(`${t.url}/workflows/nap/execute`, { method: 'POST', json: { input: { ms: 300 }, options: { executionId: 'nap-4' } } });
  await until(
    () => stateOf('nap', 'nap-4'),
    (s) => s?.waitingFor !== undefined,
  );
  const c = await api(`${t.url}/workflows/nap/executions/nap-4/cancel`, { method: 'POST', json: { reason: 'no need' } });
  expect(c.status).toBe(200);
  expect((await call).body.data.status).toBe('cancelled');
  await new Promise((r) => setTimeout(r, 500));
  const st = await stateOf('nap', 'nap-4');
  expect(st.status).toBe('cancelled');
  expect(st.waitingFor).toBeUndefined();
  expect(st.events.map((e: any) => e.type)).not.toContain('step-wait-fired');
});

it('a graceful restart during a sleep does not wait for it, and the sleep ends at its due time after the restart', async () => {
  void api(`${t.url}/workflows/nap/execute`, { method: 'POST', json: { input: { ms: 2_000 }, options: { executionId: 'nap-5' } } }).catch(() => undefined);
  const waiting = await until(
    () => stateOf('nap', 'nap-5'),
    (s) => s?.waitingFor !== undefined,
  );
  const due = Date.parse(waiting.waitingFor.until);
  const closing = Date.now();
  await t.restart();
  expect(Date.now() - closing).toBeLessThan(1_500);
  const done = await until(
    () => stateOf('nap', 'nap-5'),
    (s) => s?.status !== 'running',
  );
  expect(done.status).toBe('completed');
  expect(done.output.wokeAt).toBeGreaterThanOrEqual(due);
  expect(done.output.wokeAt).toBeLessThan(due + 1_000);
  const types = done.events.map((e: any) => e.type);
  expect(types.filter((x: string) => x === 'step-waiting')).toHaveLength(1);
  expect(types.filter((x: string) => x === 'step-wait-fired')).toHaveLength(1);
});
