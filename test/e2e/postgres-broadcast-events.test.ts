/**
 * `POST /events` across nodes sharing one PostgreSQL store: an execution waiting on node B gets an
 * event posted to node A, once, with the event's data, also when the same event id is posted again
 * (to either node); A's answer lists only what A delivered itself (nothing: B owns the execution).
 * An execution suspended at its wait (owned by no node) keeps the broadcast, which it takes when
 * resumed on the other node.
 */
import path from 'node:path';
import { expect, it } from 'vitest';
import { usePgNodes } from '../helpers/pg-nodes.js';
import { api } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'durable-waits.config.ts');
const { startNodes, records } = usePgNodes({ config: CONFIG, leaseMs: 1500 });

const waitFor = <T>(check: () => T | Promise<T>, what: string, ms = 30_000) => until(check, what, ms);
const consoleHeaders = { 'x-service-dev': 'true' };

it('delivers an event posted to one node to the execution waiting on the other, exactly once, also when the id is posted twice', async () => {
  const [a, b] = await startNodes();
  const id = 'bc-pay';
  const call = api(`${b.url}/workflows/await-payment/execute`, { method: 'POST', json: { input: { orderId: id }, options: { executionId: id } } });
  await waitFor(async () => (await records(`exec:${id}`)).some((r) => r.type === 'step.waiting'), 'the wait to be recorded on B');
  const event = { name: 'payment', id: 'bc-evt', data: { orderId: id, amount: 7 } };
  const sent = await api(`${a.url}/events`, { method: 'POST', json: event });
  expect(sent.status).toBe(202);
  // A delivered nothing itself: B owns the waiting execution and delivers it from the log
  expect(sent.body.data).toEqual({ eventId: 'bc-evt', deliveredTo: [] });
  const r = await call;
  expect(r.body.data).toMatchObject({ status: 'completed', result: { shipped: true, payment: { orderId: id, amount: 7 } } });
  // the same id again, to A and to B: the same answer, nothing delivered twice
  const again = await api(`${a.url}/events`, { method: 'POST', json: event });
  expect(again.body.data).toEqual({ eventId: 'bc-evt', deliveredTo: [] });
  expect((await api(`${b.url}/events`, { method: 'POST', json: event })).status).toBe(202);
  const recs = await records(`exec:${id}`);
  expect(recs.filter((x) => x.type === 'step.wait.fired').map((x) => x.data.eventId)).toEqual(['bc-evt']);
  expect(recs.filter((x) => x.type === 'execution.completed')).toHaveLength(1);
  expect((await records('event:bc-evt')).map((x) => x.type)).toEqual(['event.published', 'event.delivered']);
  for (const node of [a, b]) expect((await api(`${node.url}/observability/status`, { headers: consoleHeaders })).body.data.stuckExecutions).toEqual([]);
}, 90_000);

it('keeps a broadcast for an execution suspended at its wait, which takes it when resumed on the other node', async () => {
  const [a, b] = await startNodes();
  const id = 'bc-held';
  void api(`${b.url}/workflows/await-payment/execute`, { method: 'POST', json: { input: { orderId: id }, options: { executionId: id } } }).catch(() => undefined);
  await waitFor(async () => (await records(`exec:${id}`)).some((r) => r.type === 'step.waiting'), 'the wait to be recorded on B');
  expect((await api(`${b.url}/workflows/await-payment/executions/${id}/suspend`, { method: 'POST', json: { reason: 'hold' } })).status).toBe(200);
  const sent = await api(`${a.url}/events`, { method: 'POST', json: { name: 'payment', id: 'bc-held-evt', data: { orderId: id, amount: 3 } } });
  expect(sent.body.data).toEqual({ eventId: 'bc-held-evt', deliveredTo: [id] });
  expect((await api(`${a.url}/workflows/await-payment/executions/${id}/resume`, { method: 'POST', json: {} })).status).toBeLessThan(300);
  const done = await waitFor(async () => {
    const recs = await records(`exec:${id}`);
    return recs.at(-1)?.type === 'execution.completed' ? recs : undefined;
  }, 'the resumed execution to complete');
  expect(done.filter((x) => x.type === 'step.wait.fired').map((x) => x.data.data)).toEqual([{ orderId: id, amount: 3 }]);
}, 90_000);

it('delivers an event posted while the waiting execution’s node is dead once the other node took the execution over', async () => {
  const [a, b] = await startNodes();
  const id = 'bc-takeover';
  void api(`${b.url}/workflows/await-payment/execute`, { method: 'POST', json: { input: { orderId: id }, options: { executionId: id } } }).catch(() => undefined);
  await waitFor(async () => (await records(`exec:${id}`)).some((r) => r.type === 'step.waiting'), 'the wait to be recorded on B');
  b.child.kill('SIGKILL');
  await b.exited;
  // B's lease is still current: A leaves the execution to its owner, and to whoever takes it over
  const sent = await api(`${a.url}/events`, { method: 'POST', json: { name: 'payment', id: 'bc-takeover-evt', data: { orderId: id, amount: 9 } } });
  expect(sent.body.data).toEqual({ eventId: 'bc-takeover-evt', deliveredTo: [] });
  const done = await waitFor(async () => {
    const recs = await records(`exec:${id}`);
    return recs.at(-1)?.type === 'execution.completed' ? recs : undefined;
  }, 'A to take the execution over and deliver the event');
  expect(done.filter((x) => x.type === 'execution.recovered')).toHaveLength(1);
  expect(done.filter((x) => x.type === 'step.wait.fired').map((x) => x.data.eventId)).toEqual(['bc-takeover-evt']);
  expect(done.at(-1)!.data.result).toEqual({ shipped: true, payment: { orderId: id, amount: 9 } });
}, 90_000);
