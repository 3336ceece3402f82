/**
 * Durable step retries against the real server (the CLI, LevelDB): a backoff survives `kill -9`
 * (the next attempt runs once, at the retryAt recorded before the crash, not a new backoff from the
 * restart); a NonRetryableError fails the run at once; an attempt past its timeoutMs fails and is
 * retried; the SSE stream and the state show each attempt.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { api } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'step-retries.config.ts');
const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-retries-'));
const dataDir = path.join(dir, 'data');
let server: SpawnedServer | undefined;

afterAll(async () => {
  await killSpawned(server);
  rmSync(dir, { recursive: true, force: true });
});

const runsIn = (file: string): number[] => {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

it('runs the next attempt once, at the retryAt recorded before a SIGKILL during the backoff', async () => {
  server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
  const callsFile = path.join(dir, 'flaky-calls');
  const state = (url: string) => api(`${url}/workflows/flaky/executions/crash-retry/state`).then((r) => r.body.data);
  void api(`${server.url}/workflows/flaky/execute`, { method: 'POST', json: { input: { callsFile, failures: 1 }, options: { executionId: 'crash-retry' } } }).catch(() => undefined);
  const waiting = await until(
    async () => {
      const s = await state(server!.url).catch(() => undefined);
      return s?.waitingFor?.kind === 'retry' ? s.waitingFor : undefined;
    },
    'the first attempt to fail and its retry to be recorded',
    15_000,
  );
  expect(waiting).toMatchObject({ kind: 'retry', stepId: 'charge', attempt: 2 });
  const retryAt = Date.parse(waiting.until);
  server.child.kill('SIGKILL');
  expect(await server.exited).toBe('SIGKILL');
  expect(runsIn(callsFile)).toHaveLength(1);

  server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
  const restartedAt = Date.now();
  const done = await until(
    async () => {
      const s = await state(server!.url);
      if (s.status === 'running' && s.waitingFor) expect(s.waitingFor).toEqual(waiting); // the same retry, not a new backoff
      return s.status !== 'running' ? s : undefined;
    },
    'the run to finish after the restart',
    20_000,
  );
  expect(done.status).toBe('completed');
  expect(done.output).toEqual({ charged: true, runs: 2 });
  const runs = runsIn(callsFile);
  expect(runs).toHaveLength(2);
  expect(runs[1]).toBeGreaterThanOrEqual(retryAt);
  // at the recorded retryAt, not a whole backoff (6 s) after the restart
  expect(runs[1]).toBeLessThan(Math.max(retryAt, restartedAt) + 1_500);
  expect(runs[1]).toBeLessThan(restartedAt + 6_000);
  const types = done.events.map((e: any) => e.type);
  expect(types.filter((t: string) => t === 'step-retry')).toHaveLength(1);
  expect(types.filter((t: string) => t === 'step-start')).toHaveLength(2);
  expect(done.attempts.charge).toEqual([
    expect.objectContaining({ attempt: 1, status: 'failed', error: expect.objectContaining({ message: 'gateway down (run 1)' }), retryAt: waiting.until }),
    expect.objectContaining({ attempt: 2, status: 'success' }),
  ]);
  expect(done.waitingFor).toBeUndefined();
}, 60_000);

it('fails the run at once on a NonRetryableError, with its name', async () => {
  server ??= await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
  const callsFile = path.join(dir, 'fatal-calls');
  const r = await api(`${server.url}/workflows/fatal/execute`, { method: 'POST', json: { input: { callsFile }, options: { executionId: 'fatal-1' } } });
  expect(r.status).toBe(500);
  const s = (await api(`${server.url}/workflows/fatal/executions/fatal-1/state`)).body.data;
  expect(s.status).toBe('error');
  expect(s.error).toMatchObject({ message: 'card declined', name: 'NonRetryableError', stepId: 'charge' });
  expect(s.events.map((e: any) => e.type)).not.toContain('step-retry');
  expect(runsIn(callsFile)).toHaveLength(1);
}, 30_000);

it('fails an attempt past its timeoutMs and retries it, streaming a step-retry event with the timeout', async () => {
  server ??= await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
  const callsFile = path.join(dir, 'slow-calls');
  const res = await fetch(`${server.url}/workflows/slow/stream`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: { callsFile } }) });
  expect(res.status).toBe(200);
  const text = await res.text();
  const frames = text
    .split('\n\n')
    .map((f) => f.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => !!l)
    .map((l) => JSON.parse(l.slice(6)));
  const retry = frames.find((f) => f.type === 'step-retry');
  expect(retry).toMatchObject({ from: 'lookup', attempt: 1, error: { message: "Step 'lookup' timed out after 300 ms", name: 'StepTimeoutError' } });
  expect(Date.parse(retry.retryAt)).toBeGreaterThan(0);
  expect(frames.filter((f) => f.type === 'step-start').map((f) => f.metadata.attempt ?? 1)).toEqual([1, 2]);
  expect(frames.at(-1)).toMatchObject({ type: 'workflow-result', status: 'completed', result: { found: true } });
  expect(runsIn(callsFile)).toHaveLength(2);
}, 30_000);
