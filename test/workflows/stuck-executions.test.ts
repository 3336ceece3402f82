/**
 * The stuck list names what nothing would move, with its reason: a running execution no actor
 * hosts (a crash nobody recovered), a sleep whose timer is gone, an event wait nothing delivers to;
 * and leaves alone what moves: a sleeping execution with its timer armed, one waiting for an event
 * the index lists, a suspended one.
 */
import pino from 'pino';
import { expect, it } from 'vitest';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { ActorHost } from '../../src/runtime/actor-host.js';
import { WorkflowEngine } from '../../src/workflows/engine.js';
import { andSleep, andThen, andWaitForEvent, createWorkflow } from '../../src/workflows/builder.js';
import { startExecution, suspendExecution } from '../../src/workflows/commands.js';
import { EventWaitsIndex } from '../../src/workflows/event-waits-index.js';
import { stuckExecutions } from '../../src/workflows/stuck-executions.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { until } from '../helpers/until.js';

const nap = createWorkflow({ id: 'nap' }, andSleep({ id: 'nap', duration: 3_600_000 }));
const hold = createWorkflow({ id: 'hold' }, andWaitForEvent({ id: 'go', event: 'go' }));
const flaky = createWorkflow(
  { id: 'flaky' },
  andThen({
    id: 'call',
    retry: { attempts: 3, backoff: { initialMs: 60_000 } },
    execute: async () => {
      throw new Error('upstream down');
    },
  }),
);

async function setup() {
  const log = createMemoryLog();
  const clock = new ManualClock();
  const engine = new WorkflowEngine({ log, host: new ActorHost(log), logger: pino({ level: 'silent' }), workflows: [nap, hold, flaky], clock });
  engine.fanout.start();
  const index = new EventWaitsIndex(log);
  await index.start();
  const ids: string[] = [];
  const start = async (workflowId: string, executionId: string) => {
    await startExecution(engine, workflowId, undefined, { executionId });
    ids.push(executionId);
  };
  const list = (e = engine) => stuckExecutions({ engine: e, eventWaits: index, running: async () => ids });
  return { log, clock, engine, index, start, list };
}

it('leaves a sleeping execution with its timer armed, one waiting for a listed event and a suspended one off the list', async () => {
  const { engine, start, list } = await setup();
  await start('nap', 's1');
  await start('hold', 'w1');
  await start('hold', 'p1');
  await until(() => engine.waits.timers.size === 1 && engine.waits.isWaiting('w1', 'go') && engine.waits.isWaiting('p1', 'go'));
  await suspendExecution(engine, 'hold', 'p1', 'later');
  expect(await list()).toEqual([]);
});

it('names a sleep whose timer is gone, and an event wait the index does not list', async () => {
  const { engine, index, start, list } = await setup();
  await start('nap', 's1');
  await start('hold', 'w1');
  await until(() => engine.waits.timers.size === 1 && engine.waits.isWaiting('w1', 'go'));
  await index.waitFor(engine.log.head());
  engine.waits.timers.disarm('s1\u0000nap');
  await index.stop();
  index.reset();
  const stuck = await list();
  expect(stuck.map((s) => [s.executionId, s.workflowId, s.status])).toEqual([
    ['s1', 'nap', 'running'],
    ['w1', 'hold', 'running'],
  ]);
  expect(stuck[0].reason).toMatch(/step 'nap' sleeps on 'nap' \(due .*\) with no timer armed/);
  expect(stuck[1].reason).toBe("step 'go' waits for event 'go' on 'go' with nothing to deliver it");
  expect(Date.parse(stuck[0].since)).toBeGreaterThan(0);
});

it('names a running execution no actor hosts after a crash nobody recovered', async () => {
  const { log, engine, index, start } = await setup();
  await start('nap', 's1');
  await until(() => engine.waits.timers.size === 1);
  const fresh = new WorkflowEngine({ log, host: new ActorHost(log), logger: pino({ level: 'silent' }), workflows: [nap, hold], clock: new ManualClock() });
  const stuck = await stuckExecutions({ engine: fresh, eventWaits: index, running: async () => ['s1'] });
  expect(stuck).toEqual([{ executionId: 's1', workflowId: 'nap', status: 'running', since: expect.any(String), reason: 'running, but no actor hosts it on this node and no other live node owns it' }]);
  expect(await fresh.recover(['s1'])).toBe(1);
  await until(() => fresh.waits.timers.size === 1);
  expect(await stuckExecutions({ engine: fresh, eventWaits: index, running: async () => ['s1'] })).toEqual([]);
});

it('leaves an execution waiting for a step retry off the list while its timer is armed, and names the retry when it is not', async () => {
  const { engine, log, start, list } = await setup();
  await start('flaky', 'r1');
  await until(async () => (await log.readStream('exec:r1')).some((r) => r.type === 'step.retrying') && engine.waits.timers.size === 1);
  expect(await list()).toEqual([]);
  engine.waits.timers.disarm('r1\u0000retry');
  const [stuck] = await list();
  expect(stuck).toMatchObject({ executionId: 'r1', workflowId: 'flaky', status: 'running' });
  expect(stuck.reason).toMatch(/^a retry of step 'call' is due .* with no timer armed$/);
});
