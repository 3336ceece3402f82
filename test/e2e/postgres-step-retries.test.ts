/**
 * Durable step retries on two server processes sharing one PostgreSQL store: the owner of an
 * execution is killed (SIGKILL) while a failed attempt waits for its retry; the other node takes
 * the execution over and runs the next attempt once, at the retryAt recorded before the kill.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { usePgNodes } from '../helpers/pg-nodes.js';
import { api } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'step-retries.config.ts');
const { startNodes, records, freshPath } = usePgNodes({ config: CONFIG, leaseMs: 1500 });

it('runs the retry once, at its recorded retryAt, on the node that took the execution over from a killed owner', async () => {
  const [a, b] = await startNodes();
  const id = 'pg-retry';
  const callsFile = freshPath('calls');
  void api(`${a.url}/workflows/flaky/execute`, { method: 'POST', json: { input: { callsFile, failures: 1 }, options: { executionId: id } } }).catch(() => undefined);
  const retrying = await until(async () => (await records(`exec:${id}`)).find((r) => r.type === 'step.retrying'), 'the first attempt to fail on the owner', 30_000);
  const retryAt = retrying.data.retryAt as number;
  a.child.kill('SIGKILL');
  await a.exited;
  const done = await until(
    async () => {
      const recs = await records(`exec:${id}`);
      return recs.at(-1)?.type === 'execution.completed' ? recs : undefined;
    },
    'the other node to run the retry and finish',
    30_000,
  );
  const types = done.map((r) => r.type);
  expect(types.filter((t) => t === 'step.retrying')).toHaveLength(1);
  expect(types.filter((t) => t === 'execution.recovered')).toHaveLength(1);
  const starts = done.filter((r) => r.type === 'step.started');
  expect(starts.map((r) => r.data.stepAttempt ?? 1)).toEqual([1, 2]);
  // the second attempt started at the recorded retryAt (not after a new 6 s backoff from the takeover), once
  const recoveredAt = done.find((r) => r.type === 'execution.recovered')!.at;
  expect(starts[1].at).toBeGreaterThanOrEqual(retryAt);
  expect(starts[1].at).toBeLessThan(Math.max(retryAt, recoveredAt) + 2_000);
  expect(starts[1].at).toBeLessThan(recoveredAt + 6_000);
  const runs = readFileSync(callsFile, 'utf8').trim().split('\n');
  expect(runs).toHaveLength(2);
  const state = await api(`${b.url}/workflows/flaky/executions/${id}/state`);
  expect(state.body.data).toMatchObject({ status: 'completed', output: { charged: true, runs: 2 } });
  expect(state.body.data.attempts.charge.map((x: any) => x.status)).toEqual(['failed', 'success']);
}, 90_000);
