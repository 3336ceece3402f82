/**
 * A broadcast whose receiving node died between its append and its deliveries is not lost: the
 * next start folds the log, finds it pending for the executions that were waiting when it was
 * appended, and delivers it once recovery is done; one that began waiting after it gets nothing.
 */
import pino from 'pino';
import { expect, it } from 'vitest';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { ActorHost } from '../../src/runtime/actor-host.js';
import { WorkflowEngine } from '../../src/workflows/engine.js';
import { andWaitForEvent, createWorkflow } from '../../src/workflows/builder.js';
import { startExecution } from '../../src/workflows/commands.js';
import { workflowEvents } from '../../src/workflows/event-routes.js';
import { executionStream } from '../../src/workflows/events.js';
import { until } from '../helpers/until.js';

const hold = createWorkflow({ id: 'hold' }, andWaitForEvent({ id: 'go', event: 'go' }));

function node(log: ReturnType<typeof createMemoryLog>) {
  const engine = new WorkflowEngine({ log, host: new ActorHost(log), logger: pino({ level: 'silent' }), workflows: [hold] });
  engine.fanout.start();
  return { engine, events: workflowEvents(engine, () => undefined) };
}

it('delivers at the next start a broadcast appended by a node that died before delivering it, to the executions waiting when it was appended', async () => {
  const log = createMemoryLog();
  const first = node(log);
  await first.events.start();
  await first.events.deliver();
  await startExecution(first.engine, 'hold', undefined, { executionId: 'early' });
  await until(() => first.engine.waits.isWaiting('early', 'go'));
  // the receiving node appends the broadcast and dies before its deliveries (its engine never sees the record)
  await first.events.stop();
  await log.append('event:lost', [{ type: 'event.published', data: { name: 'go', data: { paid: 1 } } }]);
  // an execution that starts waiting after the broadcast is not one it was for
  await startExecution(first.engine, 'hold', undefined, { executionId: 'late' });
  await until(() => first.engine.waits.isWaiting('late', 'go'));
  await first.engine.stop();

  const second = node(log);
  await second.events.start();
  expect(await second.engine.recover(['early', 'late'])).toBe(2);
  await second.events.deliver();
  const done = await until(async () => {
    const recs = await log.readStream(executionStream('early'));
    return recs.at(-1)?.type === 'execution.completed' ? recs : undefined;
  }, 'the early execution to complete');
  expect(done.filter((r) => r.type === 'step.wait.fired').map((r) => r.data)).toEqual([expect.objectContaining({ eventId: 'lost', data: { paid: 1 } })]);
  expect(done.at(-1)!.data).toMatchObject({ result: { paid: 1 } });
  await new Promise((r) => setTimeout(r, 50));
  expect((await log.readStream(executionStream('late'))).map((r) => r.type)).not.toContain('step.wait.fired');
  await second.events.stop();
  await second.engine.stop();
});
