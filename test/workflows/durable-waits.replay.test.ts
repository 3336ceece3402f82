/**
 * Offline replay (`eventloom replay`) of histories with durable waits: the recorded wait and its
 * firing are fed, not waited for again, so a history of a sleep and of an event wait replays as
 * identical with the same code, in both modes.
 */
import { expect, it } from 'vitest';
import { z } from 'zod';
import { andSleep, andThen, andWaitForEvent, createWorkflow } from '../../src/workflows/builder.js';
import { startExecution } from '../../src/workflows/commands.js';
import { replayExecutionHistory, collectDefinitions } from '../../src/workflows/history-replay.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { makeEngine, recordsOf } from './helpers.js';

const flow = createWorkflow(
  { id: 'flow' },
  andThen({ id: 'a', execute: async () => ({ n: 1 }) }),
  andSleep({ id: 'nap', duration: 1_000 }),
  andWaitForEvent({ id: 'paid', event: 'payment', schema: z.object({ amount: z.number() }) }),
  andThen({ id: 'b', execute: async ({ data }) => ({ total: (data as { amount: number }).amount + 1 }) }),
);

it('replays a history with a sleep and an event wait as identical', async () => {
  const clock = new ManualClock();
  const engine = makeEngine([flow], { clock });
  const run = await startExecution(engine, 'flow', undefined, { executionId: 'r1' });
  const settle = () => new Promise((r) => setTimeout(r, 30));
  await settle();
  clock.advance(1_000);
  await settle();
  const actor = await engine.host.load(engine.kind, 'exec:r1');
  for (let i = 0; i < 20 && !actor.snapshot.context.waits?.['paid']; i++) await settle();
  expect((await engine.waits.deliver(actor, { eventId: 'e1', name: 'payment', data: { amount: 4 } }, 'always')).delivery).toBe('consumed');
  expect((await run.settled).type).toBe('execution.completed');
  const records = await recordsOf(engine, 'r1');
  for (const live of [false, true]) {
    const report = await replayExecutionHistory(records, { definitions: collectDefinitions([flow]), live });
    expect(report.divergence).toBeUndefined();
    expect(report.result).toBe('identical');
  }
});
