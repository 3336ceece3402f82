/**
 * Durable waits on two server processes sharing one PostgreSQL store: a sleep whose node is killed
 * (SIGKILL) is taken over by the other node, which fires it once at the recorded due time (not a
 * new full sleep); an event sent to the node that does not own the execution reaches the owner's
 * waiting step (the targeted route is forwarded like any command).
 */
import path from 'node:path';
import { expect, it } from 'vitest';
import { usePgNodes } from '../helpers/pg-nodes.js';
import { api } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'durable-waits.config.ts');
const { startNodes, records } = usePgNodes({ config: CONFIG, leaseMs: 1500 });

const waitFor = <T>(check: () => T | Promise<T>, what: string, ms = 30_000) => until(check, what, ms);

it('fires a sleep once, at its recorded due time, on the node that took the execution over', async () => {
  const [a, b] = await startNodes();
  const id = 'pg-nap';
  void api(`${a.url}/workflows/nap/execute`, { method: 'POST', json: { input: { ms: 6_000 }, options: { executionId: id } } }).catch(() => undefined);
  const waiting = await waitFor(async () => (await records(`exec:${id}`)).find((r) => r.type === 'step.waiting'), 'the sleep to be recorded');
  const due = waiting.data.until as number;
  a.child.kill('SIGKILL');
  const done = await waitFor(async () => {
    const recs = await records(`exec:${id}`);
    return recs.at(-1)?.type === 'execution.completed' ? recs : undefined;
  }, 'the other node to finish the execution');
  expect(done.filter((r) => r.type === 'execution.recovered')).toHaveLength(1);
  expect(done.filter((r) => r.type === 'step.waiting')).toHaveLength(1);
  const fired = done.filter((r) => r.type === 'step.wait.fired');
  expect(fired).toHaveLength(1);
  expect(fired[0].at).toBeGreaterThanOrEqual(due);
  // at the recorded due time, not a whole sleep after the takeover
  expect(fired[0].at).toBeLessThan(due + 2_000);
  const state = await api(`${b.url}/workflows/nap/executions/${id}/state`);
  expect(state.body.data.status).toBe('completed');
}, 90_000);

it('delivers an event sent to the node that does not own the waiting execution', async () => {
  const [a, b] = await startNodes();
  const id = 'pg-pay';
  const call = api(`${a.url}/workflows/await-payment/execute`, { method: 'POST', json: { input: { orderId: id }, options: { executionId: id } } });
  await waitFor(async () => (await records(`exec:${id}`)).some((r) => r.type === 'step.waiting'), 'the wait to be recorded');
  const sent = await api(`${b.url}/workflows/await-payment/executions/${id}/events`, { method: 'POST', json: { name: 'payment', id: 'pg-evt', data: { orderId: id, amount: 5 } } });
  expect(sent.status).toBe(202);
  expect(sent.body.data).toEqual({ eventId: 'pg-evt', delivered: true });
  const r = await call;
  expect(r.body.data).toMatchObject({ status: 'completed', result: { shipped: true, payment: { amount: 5 } } });
  expect((await records(`exec:${id}`)).filter((x) => x.type === 'step.wait.fired')).toHaveLength(1);
}, 90_000);
