/**
 * Durable step retries in the engine on a manual clock: each failed attempt is recorded with its
 * error and retryAt and the next attempt starts at that time, not before; a NonRetryableError ends
 * the run at once; an attempt past its timeoutMs fails and is retried; an engine started again on
 * the same log during a backoff runs the next attempt at the recorded retryAt, once; the state
 * view shows the attempts and what the run waits for.
 */
import pino from 'pino';
import { expect, it } from 'vitest';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';
import { startExecution } from '../../src/workflows/commands.js';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { ActorHost } from '../../src/runtime/actor-host.js';
import { WorkflowEngine } from '../../src/workflows/engine.js';
import { NonRetryableError } from '../../src/workflows/retry-policy.js';
import { foldExecution, toExecutionState } from '../../src/workflows/executions-view.js';
import { workflowEventOf } from '../../src/workflows/events.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { makeEngine, recordsOf, typesOf } from './helpers.js';

const settle = () => new Promise((r) => setTimeout(r, 30));

/** A workflow whose one step fails its first `failures` runs (counted in `calls`), then answers 'ok'. */
function flaky(id: string, failures: number, calls: { n: number }, error: () => Error = () => new Error('boom')) {
  return createWorkflow(
    { id },
    andThen({
      id: 'call',
      retry: { attempts: 4, backoff: { initialMs: 1_000, factor: 3, maxMs: 5_000 } },
      execute: async () => {
        calls.n++;
        if (calls.n <= failures) throw error();
        return 'ok';
      },
    }),
  );
}

it('records each failed attempt and starts the next one at its recorded retryAt, backing off by the policy', async () => {
  const clock = new ManualClock();
  const calls = { n: 0 };
  const engine = makeEngine([flaky('f1', 3, calls)], { clock });
  const t0 = clock.now();
  const run = await startExecution(engine, 'f1', undefined, { executionId: 'r1' });
  await settle();
  const retrying = () => recordsOf(engine, 'r1').then((rs) => rs.filter((r) => r.type === 'step.retrying').map((r) => r.data as { stepAttempt: number; retryAt: number; error: { message: string } }));
  expect(await retrying()).toEqual([expect.objectContaining({ stepAttempt: 1, retryAt: t0 + 1_000, error: expect.objectContaining({ message: 'boom' }) })]);
  clock.advance(999);
  await settle();
  expect(calls.n).toBe(1);
  clock.advance(1);
  await settle();
  expect(calls.n).toBe(2);
  // 1 s, then 3 s, then 9 s capped at 5 s
  expect((await retrying()).map((r) => r.retryAt - t0)).toEqual([1_000, 1_000 + 3_000]);
  clock.advance(3_000);
  await settle();
  expect((await retrying()).map((r) => r.retryAt - t0)).toEqual([1_000, 4_000, 4_000 + 5_000]);
  const state = toExecutionState(foldExecution(await recordsOf(engine, 'r1')));
  expect(state.waitingFor).toEqual({ kind: 'retry', stepId: 'call', attempt: 4, until: new Date(t0 + 9_000).toISOString() });
  expect((state.attempts as Record<string, unknown[]>).call.map((a: any) => [a.attempt, a.status])).toEqual([
    [1, 'failed'],
    [2, 'failed'],
    [3, 'failed'],
  ]);
  clock.advance(5_000);
  expect((await run.settled).type).toBe('execution.completed');
  const records = await recordsOf(engine, 'r1');
  expect(typesOf(records).filter((t) => t === 'step.started')).toHaveLength(4);
  expect(records.filter((r) => r.type === 'step.started').map((r) => (r.data as { stepAttempt?: number }).stepAttempt ?? 1)).toEqual([1, 2, 3, 4]);
  const done = toExecutionState(foldExecution(records));
  expect(done.waitingFor).toBeUndefined();
  expect((done.attempts as Record<string, any[]>).call.map((a) => a.status)).toEqual(['failed', 'failed', 'failed', 'success']);
  const sse = records.filter((r) => r.type === 'step.retrying').map((r) => workflowEventOf(r)!);
  expect(sse.map((e) => [e.type, e.from, e.attempt])).toEqual([
    ['step-retry', 'call', 1],
    ['step-retry', 'call', 2],
    ['step-retry', 'call', 3],
  ]);
  expect(sse[0].retryAt).toBe(new Date(t0 + 1_000).toISOString());
  expect((sse[0].error as { message: string }).message).toBe('boom');
});

it('fails the run after the last attempt with the last error', async () => {
  const clock = new ManualClock();
  const calls = { n: 0 };
  const engine = makeEngine([flaky('f2', 10, calls)], { clock });
  const run = await startExecution(engine, 'f2', undefined, { executionId: 'r2' });
  for (let i = 0; i < 4; i++) {
    await settle();
    clock.advance(5_000);
  }
  const settled = await run.settled;
  expect(settled.type).toBe('execution.failed');
  expect(calls.n).toBe(4);
  expect(typesOf(await recordsOf(engine, 'r2')).filter((t) => t === 'step.retrying')).toHaveLength(3);
});

it('ends the run at once on a NonRetryableError, whatever attempts are left', async () => {
  const clock = new ManualClock();
  const calls = { n: 0 };
  const engine = makeEngine([flaky('f3', 10, calls, () => new NonRetryableError('card declined'))], { clock });
  const run = await startExecution(engine, 'f3', undefined, { executionId: 'r3' });
  const settled = await run.settled;
  expect(settled.type).toBe('execution.failed');
  expect((settled.data as { error: { message: string; name: string } }).error).toMatchObject({ message: 'card declined', name: 'NonRetryableError' });
  expect(calls.n).toBe(1);
  expect(typesOf(await recordsOf(engine, 'r3'))).not.toContain('step.retrying');
});

it('a NonRetryableError also stops the immediate re-runs of retries', async () => {
  let calls = 0;
  const wf = createWorkflow(
    { id: 'f3b' },
    andThen({
      id: 'once',
      retries: 5,
      execute: () => {
        calls++;
        throw new NonRetryableError('no');
      },
    }),
  );
  const engine = makeEngine([wf]);
  const run = await startExecution(engine, 'f3b', undefined, { executionId: 'r3b' });
  expect((await run.settled).type).toBe('execution.failed');
  expect(calls).toBe(1);
});

it('fails an attempt that outlives its timeoutMs (its signal aborted) and retries it', async () => {
  let calls = 0;
  let abortedFirst = false;
  const wf = createWorkflow(
    { id: 'f4' },
    andThen({
      id: 'slow',
      timeoutMs: 50,
      retry: { attempts: 2, backoff: { initialMs: 0 } },
      execute: async (ctx) => {
        calls++;
        if (calls === 1) {
          await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
          abortedFirst = ctx.signal.aborted;
          return 'late';
        }
        return 'fast';
      },
    }),
  );
  const engine = makeEngine([wf]);
  const run = await startExecution(engine, 'f4', undefined, { executionId: 'r4' });
  const settled = await run.settled;
  expect(settled.type).toBe('execution.completed');
  expect((settled.data as { result: unknown }).result).toBe('fast');
  expect(abortedFirst).toBe(true);
  const retrying = (await recordsOf(engine, 'r4')).find((r) => r.type === 'step.retrying')!;
  expect((retrying.data as { error: { message: string; name: string } }).error).toMatchObject({ message: "Step 'slow' timed out after 50 ms", name: 'StepTimeoutError' });
});

it('a timeout with no attempt left fails the run with the timeout message', async () => {
  const wf = createWorkflow({ id: 'f5' }, andThen({ id: 'hang', timeoutMs: 20, execute: () => new Promise(() => undefined) }));
  const engine = makeEngine([wf]);
  const run = await startExecution(engine, 'f5', undefined, { executionId: 'r5' });
  const settled = await run.settled;
  expect(settled.type).toBe('execution.failed');
  expect((settled.data as { error: { message: string } }).error.message).toBe("Step 'hang' timed out after 20 ms");
});

it('after a crash during a backoff, a new engine runs the next attempt at the recorded retryAt, once', async () => {
  const log = createMemoryLog();
  const clock = new ManualClock();
  const calls = { n: 0 };
  const def = flaky('f6', 1, calls);
  const first = new WorkflowEngine({ log, host: new ActorHost(log), logger: pino({ level: 'silent' }), workflows: [def], clock });
  first.fanout.start();
  await startExecution(first, 'f6', undefined, { executionId: 'r6' });
  await settle();
  const retryAt = ((await recordsOf(first, 'r6')).find((r) => r.type === 'step.retrying')!.data as { retryAt: number }).retryAt;
  clock.advance(400);
  // the first engine is gone (its timers with it); a second one on the same log recovers the run
  const clock2 = new ManualClock(clock.now());
  const second = new WorkflowEngine({ log, host: new ActorHost(log), logger: pino({ level: 'silent' }), workflows: [def], clock: clock2 });
  second.fanout.start();
  expect(await second.recover(['r6'])).toBe(1);
  await settle();
  expect(calls.n).toBe(1);
  clock2.advance(retryAt - clock2.now() - 1);
  await settle();
  expect(calls.n).toBe(1);
  clock2.advance(1);
  await settle();
  expect(calls.n).toBe(2);
  const records = await recordsOf(second, 'r6');
  expect(typesOf(records)).toEqual(['execution.started', 'step.started', 'step.retrying', 'execution.recovered', 'step.started', 'step.completed', 'execution.completed']);
  // the first engine's timer, had it survived, finds the retry taken: nothing more is recorded
  clock.advance(10_000);
  await settle();
  expect(await recordsOf(second, 'r6')).toHaveLength(records.length);
});

it('draws the jitter once, when the failed attempt is recorded', async () => {
  const clock = new ManualClock();
  let calls = 0;
  const wf = createWorkflow(
    { id: 'f7' },
    andThen({
      id: 'j',
      retry: { attempts: 2, backoff: { initialMs: 1_000, jitter: 0.5 } },
      execute: () => {
        if (++calls === 1) throw new Error('x');
        return 1;
      },
    }),
  );
  const engine = makeEngine([wf], { clock, random: () => 0.5 });
  const t0 = clock.now();
  const run = await startExecution(engine, 'f7', undefined, { executionId: 'r7' });
  await settle();
  const rec = (await recordsOf(engine, 'r7')).find((r) => r.type === 'step.retrying')!;
  expect((rec.data as { retryAt: number }).retryAt).toBe(t0 + 750);
  clock.advance(750);
  expect((await run.settled).type).toBe('execution.completed');
});

it('replays a recording with retries from its records, and reports a current code that would not retry', async () => {
  const { replayExecutionHistory, collectDefinitions } = await import('../../src/workflows/history-replay.js');
  const clock = new ManualClock();
  const calls = { n: 0 };
  const def = flaky('f8', 2, calls);
  const engine = makeEngine([def], { clock });
  const run = await startExecution(engine, 'f8', undefined, { executionId: 'r8' });
  for (let i = 0; i < 3; i++) {
    await settle();
    clock.advance(5_000);
  }
  expect((await run.settled).type).toBe('execution.completed');
  const records = await recordsOf(engine, 'r8');
  for (const live of [false, true]) {
    calls.n = 0; // live: the step runs again, failing its first two runs as recorded
    const report = await replayExecutionHistory(records, { definitions: collectDefinitions([def]), live });
    expect(report.result, JSON.stringify(report.divergence)).toBe('identical');
  }
  const fewer = createWorkflow({ id: 'f8' }, andThen({ id: 'call', retry: { attempts: 2 }, execute: async () => 'ok' }));
  const report = await replayExecutionHistory(records, { definitions: collectDefinitions([fewer]) });
  expect(report.result).toBe('diverged');
  expect(report.divergence).toMatchObject({ kind: 'outcome', stepId: 'call' });
  expect(report.divergence!.message).toContain('allows 2 attempt(s)');
});

it('a cancel during a backoff ends the run, and the retry timer records nothing after it', async () => {
  const { cancelExecution } = await import('../../src/workflows/commands.js');
  const clock = new ManualClock();
  const calls = { n: 0 };
  const engine = makeEngine([flaky('f9', 5, calls)], { clock });
  await startExecution(engine, 'f9', undefined, { executionId: 'r9' });
  await settle();
  await cancelExecution(engine, 'f9', 'r9', 'no more');
  clock.advance(10_000);
  await settle();
  const records = await recordsOf(engine, 'r9');
  expect(typesOf(records)).toEqual(['execution.started', 'step.started', 'step.retrying', 'execution.cancelled']);
  expect(calls.n).toBe(1);
  expect(toExecutionState(foldExecution(records)).waitingFor).toBeUndefined();
});

it('a suspend during a backoff holds the retry; the resumed step starts its attempts afresh', async () => {
  const { suspendExecution, resumeExecution } = await import('../../src/workflows/commands.js');
  const clock = new ManualClock();
  const calls = { n: 0 };
  const engine = makeEngine([flaky('f10', 1, calls)], { clock });
  await startExecution(engine, 'f10', undefined, { executionId: 'r10' });
  await settle();
  await suspendExecution(engine, 'f10', 'r10', 'hold');
  clock.advance(10_000);
  await settle();
  expect(calls.n).toBe(1);
  const resumed = await resumeExecution(engine, 'f10', 'r10', undefined);
  expect((await resumed.settled).type).toBe('execution.completed');
  const records = await recordsOf(engine, 'r10');
  expect(typesOf(records).filter((t) => t === 'step.started')).toHaveLength(2);
  expect(records.filter((r) => r.type === 'step.started').map((r) => (r.data as { stepAttempt?: number }).stepAttempt ?? 1)).toEqual([1, 1]);
});

it('tells the step which attempt it runs (ctx.attempt), the same number again when an attempt is recovered', async () => {
  const log = createMemoryLog();
  const clock = new ManualClock();
  const seen: number[] = [];
  let hang = true;
  const wf = createWorkflow(
    { id: 'f11' },
    andThen({
      id: 'a',
      retry: { attempts: 3, backoff: { initialMs: 100 } },
      execute: async ({ attempt }) => {
        seen.push(attempt);
        if (attempt === 1) throw new Error('first');
        if (hang) return new Promise(() => undefined); // attempt 2 is in flight when the engine dies
        return attempt;
      },
    }),
  );
  const first = new WorkflowEngine({ log, host: new ActorHost(log), logger: pino({ level: 'silent' }), workflows: [wf], clock });
  first.fanout.start();
  await startExecution(first, 'f11', undefined, { executionId: 'r11' });
  await settle();
  clock.advance(100);
  await settle();
  expect(seen).toEqual([1, 2]);
  hang = false;
  const second = new WorkflowEngine({ log, host: new ActorHost(log), logger: pino({ level: 'silent' }), workflows: [wf], clock: new ManualClock(clock.now()) });
  second.fanout.start();
  await second.recover(['r11']);
  await settle();
  expect(seen).toEqual([1, 2, 2]);
  const records = await recordsOf(second, 'r11');
  expect(records.at(-1)!.type).toBe('execution.completed');
  expect((records.at(-1)!.data as { result: unknown }).result).toBe(2);
});
