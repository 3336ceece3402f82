/**
 * Durable sleep in the engine on a manual clock: a sleep of an hour completes when the clock
 * reaches its due time and not before; an engine started again on the same log (a crash) waits for
 * the recorded due time, not a new hour; thousands of sleeping executions share one clock timer.
 */
import pino from 'pino';
import { expect, it } from 'vitest';
import { andSleep, andThen, createWorkflow } from '../../src/workflows/builder.js';
import { startExecution } from '../../src/workflows/commands.js';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { ActorHost } from '../../src/runtime/actor-host.js';
import { WorkflowEngine } from '../../src/workflows/engine.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { makeEngine, recordsOf, typesOf } from './helpers.js';

const HOUR = 3_600_000;
const nap = createWorkflow({ id: 'nap' }, andSleep({ id: 'nap', duration: HOUR }), andThen({ id: 'after', execute: async () => 'awake' }));

const settle = () => new Promise((r) => setTimeout(r, 30));

async function statusOf(engine: WorkflowEngine, id: string): Promise<string> {
  const types = typesOf(await recordsOf(engine, id));
  return types.includes('execution.completed') ? 'completed' : 'running';
}

it('completes an hour-long sleep when the clock reaches its due time, not before', async () => {
  const clock = new ManualClock();
  const engine = makeEngine([nap], { clock });
  const run = await startExecution(engine, 'nap', undefined, { executionId: 'n1' });
  await settle();
  const waiting = (await recordsOf(engine, 'n1')).find((r) => r.type === 'step.waiting')!;
  expect((waiting.data as { until: number }).until).toBe(clock.now() + HOUR);
  clock.advance(HOUR - 1);
  await settle();
  expect(await statusOf(engine, 'n1')).toBe('running');
  clock.advance(1);
  const settled = await run.settled;
  expect(settled.type).toBe('execution.completed');
  expect(typesOf(await recordsOf(engine, 'n1')).filter((t) => t === 'step.wait.fired')).toHaveLength(1);
});

it('after a crash, a new engine on the same log waits for the recorded due time, not a new hour', async () => {
  const log = createMemoryLog();
  const clock = new ManualClock();
  const first = new WorkflowEngine({ log, host: new ActorHost(log), logger: pino({ level: 'silent' }), workflows: [nap], clock });
  first.fanout.start();
  await startExecution(first, 'nap', undefined, { executionId: 'n2' });
  await settle();
  clock.advance(HOUR / 2);
  await settle();
  // the first engine is gone without a word (its timers with it); a second one recovers the run
  const clock2 = new ManualClock(clock.now());
  const second = new WorkflowEngine({ log, host: new ActorHost(log), logger: pino({ level: 'silent' }), workflows: [nap], clock: clock2 });
  second.fanout.start();
  expect(await second.recover(['n2'])).toBe(1);
  await settle();
  clock2.advance(HOUR / 2 - 1);
  await settle();
  expect(await statusOf(second, 'n2')).toBe('running');
  clock2.advance(1);
  await settle();
  expect(await statusOf(second, 'n2')).toBe('completed');
  const types = typesOf(await recordsOf(second, 'n2'));
  expect(types.filter((t) => t === 'step.waiting')).toHaveLength(1);
  expect(types.filter((t) => t === 'step.wait.fired')).toHaveLength(1);
  expect(types).toContain('execution.recovered');
});

it('keeps thousands of sleeping executions on one clock timer and wakes each once', async () => {
  const clock = new ManualClock();
  const engine = makeEngine([nap], { clock });
  const n = 2_000;
  const runs = await Promise.all(Array.from({ length: n }, (_, i) => startExecution(engine, 'nap', undefined, { executionId: `m${i}` })));
  for (let i = 0; i < 50 && engine.waits.timers.size < n; i++) await settle();
  expect(engine.waits.timers.size).toBe(n);
  expect(clock.pending).toBe(1);
  clock.advance(HOUR);
  const settled = await Promise.all(runs.map((r) => r.settled));
  expect(settled.every((r) => r.type === 'execution.completed')).toBe(true);
  expect(engine.waits.timers.size).toBe(0);
});
