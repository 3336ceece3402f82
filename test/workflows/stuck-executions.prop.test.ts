/**
 * No stuck runs, by construction: over random histories of starts, sleeps, event waits, events
 * (some sent twice), suspends, resumes, cancels and crashes with recovery, run on the real engine
 * (the testing harness: a crash kills the engine generation, a new one recovers the running
 * executions from the log), the list `GET /observability/status` shows as `stuckExecutions` is
 * empty after every command and after every recovery; and once the histories settle, what still
 * runs waits for an event nobody sent, which the list counts as an open wait.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Harness } from '../../src/testing/harness.js';
import { andSleep, andThen, andWaitForEvent, createWorkflow } from '../../src/workflows/builder.js';
import { EventWaitsIndex } from '../../src/workflows/event-waits-index.js';
import { EXECUTION_STREAM_PREFIX, executionStream } from '../../src/workflows/events.js';
import { foldExecution } from '../../src/workflows/executions-view.js';
import { stuckExecutions } from '../../src/workflows/stuck-executions.js';

const flow = createWorkflow(
  { id: 'stuck-prop' },
  andThen({ id: 'first', execute: async ({ data }) => data }),
  andSleep({ id: 'nap', duration: 60_000 }),
  andWaitForEvent({ id: 'go', event: 'go' }),
  andWaitForEvent({ id: 'late', event: 'late', timeoutMs: 30_000, onTimeout: 'continue' }),
  andThen({ id: 'last', execute: async () => 'done' }),
);

type Op = { kind: 'start' } | { kind: 'wait'; turns: number } | { kind: 'event'; name: 'go' | 'late'; id: string } | { kind: 'suspend' } | { kind: 'resume' } | { kind: 'cancel' } | { kind: 'crash' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'start' as const }) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 6 }).map((turns) => ({ kind: 'wait' as const, turns })) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('event' as const), name: fc.constantFrom('go' as const, 'late' as const), id: fc.constantFrom('e1', 'e2', 'e3', 'e4') }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'suspend' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'resume' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancel' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'crash' as const }) },
);

/** Running top-level executions, folded from the log (what the executions index holds). */
async function runningIds(h: Harness): Promise<string[]> {
  const ids: string[] = [];
  for (const { stream } of await h.log.listStreams(EXECUTION_STREAM_PREFIX)) {
    if (stream.includes('/', EXECUTION_STREAM_PREFIX.length)) continue;
    if (foldExecution(await h.log.readStream(stream)).status === 'running') ids.push(stream.slice(EXECUTION_STREAM_PREFIX.length));
  }
  return ids;
}

/** What `POST /events` does: delivers to each execution the index lists as waiting for the name. */
async function broadcast(h: Harness, index: EventWaitsIndex, name: string, eventId: string): Promise<void> {
  await index.waitFor(h.log.head());
  for (const id of index.waitingFor(name)) {
    const actor = await h.engine.host.load(h.engine.kind, executionStream(id));
    await h.engine.waits.deliver(actor, { eventId, name, data: { eventId } }, 'if-waiting').catch(() => undefined);
  }
}

describe('stuck executions', () => {
  it('lists none after any command or recovery of a random history with crashes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 30 }), async (ops) => {
        const h = new Harness({ workflows: [flow], settleTimeoutMs: 2_000 });
        const index = new EventWaitsIndex(h.log);
        await index.start();
        const stuck = () => stuckExecutions({ engine: h.engine, eventWaits: index, running: () => runningIds(h) });
        try {
          for (const op of ops) {
            if (op.kind === 'start') await h.execute({ n: h.started.length });
            else if (op.kind === 'wait') await h.wait(op.turns, 3);
            else if (op.kind === 'event') await broadcast(h, index, op.name, op.id);
            else if (op.kind === 'suspend') await h.suspend('paused');
            else if (op.kind === 'resume') await h.resume(undefined);
            else if (op.kind === 'cancel') await h.cancel('stop');
            else await h.crash();
            expect(await stuck(), `after ${op.kind}`).toEqual([]);
          }
          // let every run go as far as it can: what is left waits for an event or a resume
          await h.wait(30, 3);
          expect(await stuck()).toEqual([]);
          for (const id of await runningIds(h)) {
            const actor = h.engine.host.peek<typeof h.engine.kind.logic>(executionStream(id));
            const c = actor?.snapshot.context;
            expect(c?.current?.stepId === 'go' || h.engine.stepRunning(actor!), `${id} still runs at ${c?.current?.stepId}`).toBe(true);
          }
        } finally {
          await index.stop();
          await h.dispose();
        }
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 60) },
    );
  }, 120_000);
});
