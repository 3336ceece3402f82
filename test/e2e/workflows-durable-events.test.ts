/**
 * Waiting for events on the real server (LevelDB): andWaitForEvent takes an event sent through
 * `POST /events` or the execution's own events route, once; an event sent to an execution before
 * its wait is reached is kept and consumed by it; a duplicate event id delivers nothing; a timeout
 * fails the step or, with `onTimeout: "continue"`, gives null; data failing the schema is a 400.
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
const post = (path: string, json: unknown) => api(`${t.url}${path}`, { method: 'POST', json });

async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const startWaiting = async (id: string, workflow = 'await-payment') => {
  const call = post(`/workflows/${workflow}/execute`, { input: { orderId: id }, options: { executionId: id } });
  const s = await until(
    () => stateOf(workflow, id),
    (st) => st?.waitingFor !== undefined,
  );
  return { call, waiting: s.waitingFor };
};

it('an event sent to POST /events is delivered once to the executions waiting for it', async () => {
  const a = await startWaiting('pay-a');
  const b = await startWaiting('pay-b');
  expect(a.waiting).toEqual({ kind: 'event', name: 'payment', timeoutAt: null });
  const sent = await post('/events', { name: 'payment', data: { orderId: 'o-1', amount: 12 }, id: 'evt-1' });
  expect(sent.status).toBe(202);
  expect(sent.body).toEqual({ success: true, data: { eventId: 'evt-1', deliveredTo: ['pay-a', 'pay-b'] } });
  for (const c of [a.call, b.call]) {
    const r = await c;
    expect(r.body.data.status).toBe('completed');
    expect(r.body.data.result).toEqual({ shipped: true, payment: { orderId: 'o-1', amount: 12 } });
  }
  // the same id again: the same answer, nothing delivered twice
  const c = await startWaiting('pay-c');
  const again = await post('/events', { name: 'payment', data: { orderId: 'o-1', amount: 12 }, id: 'evt-1' });
  expect(again.status).toBe(202);
  expect(again.body.data).toEqual({ eventId: 'evt-1', deliveredTo: ['pay-a', 'pay-b'] });
  expect((await stateOf('await-payment', 'pay-c')).status).toBe('running');
  const fired = (await stateOf('await-payment', 'pay-a')).events.filter((e: any) => e.type === 'step-wait-fired');
  expect(fired).toHaveLength(1);
  // a match that refuses the event: not delivered
  const refused = await post('/events', { name: 'payment', data: { orderId: 'refused', amount: 1 } });
  expect(refused.body.data.deliveredTo).toEqual([]);
  await post('/events', { name: 'payment', data: { orderId: 'o-2', amount: 3 } });
  expect((await c.call).body.data.result.payment.amount).toBe(3);
});

it('an event sent to one execution is delivered to it once, and a duplicate id is ignored', async () => {
  const { call } = await startWaiting('pay-d');
  const r = await post('/workflows/await-payment/executions/pay-d/events', { name: 'payment', data: { orderId: 'pay-d', amount: 7 }, id: 'evt-d' });
  expect(r.status).toBe(202);
  expect(r.body).toEqual({ success: true, data: { eventId: 'evt-d', delivered: true } });
  expect((await call).body.data.result.payment.amount).toBe(7);
  const dup = await post('/workflows/await-payment/executions/pay-d/events', { name: 'payment', data: { orderId: 'pay-d', amount: 7 }, id: 'evt-d' });
  expect(dup.status).toBe(409); // the execution completed: it takes no more events
  const events = (await stateOf('await-payment', 'pay-d')).events.map((e: any) => e.type);
  expect(events.filter((x: string) => x === 'step-wait-fired')).toHaveLength(1);
});

it('an event sent to an execution before its wait is reached is kept and consumed by that wait', async () => {
  // sleeping at its first step: the wait is not reached yet
  const { call, waiting } = await startWaiting('pay-e', 'nap-then-pay');
  expect(waiting.kind).toBe('sleep');
  const early = await post('/workflows/nap-then-pay/executions/pay-e/events', { name: 'payment', data: { orderId: 'pay-e', amount: 9 }, id: 'evt-e' });
  expect(early.status).toBe(202);
  expect(early.body.data).toEqual({ eventId: 'evt-e', delivered: false });
  const dup = await post('/workflows/nap-then-pay/executions/pay-e/events', { name: 'payment', data: { orderId: 'pay-e', amount: 99 }, id: 'evt-e' });
  expect(dup.body.data).toEqual({ eventId: 'evt-e', delivered: false });
  const done = await call;
  expect(done.body.data.status).toBe('completed');
  expect(done.body.data.result).toEqual({ orderId: 'pay-e', amount: 9 });
  const types = (await stateOf('nap-then-pay', 'pay-e')).events.map((e: any) => e.type);
  expect(types.filter((x: string) => x === 'workflow-event-received')).toHaveLength(1);
  expect(types.filter((x: string) => x === 'step-wait-fired')).toHaveLength(2);
});

it('data failing the wait step schema is a 400 naming the problem', async () => {
  const r = await post('/workflows/await-payment/executions/pay-a/events', { name: 'payment', data: { orderId: 'x', amount: 'lots' } });
  expect(r.status).toBe(400);
  expect(r.body.error).toMatch(/Event 'payment' data does not match the schema of step 'paid': amount: .*number/);
  const noName = await post('/events', { data: {} });
  expect(noName.status).toBe(400);
  expect(noName.body.error).toMatch(/name/);
  const unknown = await post('/workflows/await-payment/executions/pay-a/events', { name: 'refund', data: {} });
  expect(unknown.status).toBe(400);
  expect(unknown.body.error).toMatch(/no andWaitForEvent step waiting for 'refund'/);
  const missing = await post('/workflows/await-payment/executions/nope/events', { name: 'payment', data: { orderId: 'x', amount: 1 } });
  expect(missing.status).toBe(404);
});

it('a wait that times out fails with the message, or gives null with onTimeout continue', async () => {
  const failed = await post('/workflows/payment-or-fail/execute', { input: { orderId: 'late-1' } });
  expect(failed.status).toBe(500);
  expect(failed.body.cause).toBe("Timed out waiting for event 'late-payment'");
  const cont = await post('/workflows/payment-or-nothing/execute', { input: { orderId: 'late-2' }, options: { executionId: 'late-2' } });
  expect(cont.body.data.status).toBe('completed');
  expect(cont.body.data.result).toBeNull();
  const st = await stateOf('payment-or-nothing', 'late-2');
  expect(st.events.find((e: any) => e.type === 'step-waiting').metadata.waitingFor.timeoutAt).toMatch(/^\d{4}-/);
});
