/**
 * The event-waits index resumes from its checkpoint: whatever the points where the process stops
 * (folds in progress dropped, the log closed and opened again), the open waits and the pending
 * broadcasts it holds, and the rows it stored, equal a full rebuild of the same log. A start reads
 * its rows and the log after the checkpoint, never the whole log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { openLevelLog, type LevelEventLog } from '../../src/log/level/level-log.js';
import { EventWaitsIndex } from '../../src/workflows/event-waits-index.js';

const NAMES = ['paid', 'shipped'];
const EXECUTIONS = ['e0', 'e1', 'e2'];

type Op =
  | { op: 'wait'; exec: number; name: number; wait: number }
  | { op: 'fire'; exec: number; wait: number; event: number }
  | { op: 'publish'; event: number; name: number }
  | { op: 'received'; exec: number; event: number }
  | { op: 'stepDone'; exec: number }
  | { op: 'end'; exec: number }
  | { op: 'stop'; settled: boolean };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('wait' as const), exec: fc.nat(2), name: fc.nat(1), wait: fc.nat(3) }),
  fc.record({ op: fc.constant('fire' as const), exec: fc.nat(2), wait: fc.nat(3), event: fc.nat(5) }),
  fc.record({ op: fc.constant('publish' as const), event: fc.nat(5), name: fc.nat(1) }),
  fc.record({ op: fc.constant('received' as const), exec: fc.nat(2), event: fc.nat(5) }),
  fc.record({ op: fc.constant('stepDone' as const), exec: fc.nat(2) }),
  fc.record({ op: fc.constant('end' as const), exec: fc.nat(2) }),
  fc.record({ op: fc.constant('stop' as const), settled: fc.boolean() }),
);

/** What the index holds, in a comparable order. */
function holdings(index: EventWaitsIndex) {
  return {
    waiting: NAMES.map((n) => index.waitingFor(n).sort()),
    pending: index
      .withPending()
      .sort()
      .map((id) => [id, index.pendingFor(id)]),
  };
}

const rows = (log: LevelEventLog) => log.kv.range({ gte: 'workflow-event-waits/', lt: 'workflow-event-waits0' });

async function append(log: LevelEventLog, o: Exclude<Op, { op: 'stop' }>, published: Set<number>): Promise<void> {
  if (o.op === 'publish') {
    // an event id is published once (its stream takes one record)
    if (published.has(o.event)) return;
    published.add(o.event);
    await log.append(`event:ev${o.event}`, [{ type: 'event.published', data: { name: NAMES[o.name], data: { n: o.event } } }]);
    return;
  }
  const stream = `exec:${EXECUTIONS[o.exec]}`;
  const record =
    o.op === 'wait'
      ? { type: 'step.waiting', data: { kind: 'event', waitId: `w${o.wait}`, name: NAMES[o.name], stepId: `s${o.wait % 2}` } }
      : o.op === 'fire'
        ? { type: 'step.wait.fired', data: { waitId: `w${o.wait}`, eventId: `ev${o.event}` } }
        : o.op === 'received'
          ? { type: 'execution.event.received', data: { eventId: `ev${o.event}` } }
          : o.op === 'stepDone'
            ? { type: 'step.completed', data: { stepId: 's0' } }
            : { type: 'execution.completed', data: { result: null } };
  await log.append(stream, [record]);
}

describe('the event-waits index', () => {
  it('after stops at random points holds and stores what a full rebuild of the same log does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-event-waits-'));
        try {
          let log = await openLevelLog(dir);
          let index = new EventWaitsIndex(log);
          await index.start();
          const published = new Set<number>();
          for (const o of ops) {
            if (o.op !== 'stop') {
              await append(log, o, published);
              continue;
            }
            if (o.settled) await index.waitFor(log.head());
            await index.stop();
            await log.close();
            log = await openLevelLog(dir);
            index = new EventWaitsIndex(log);
            await index.start();
          }
          await index.waitFor(log.head());
          const resumed = holdings(index);
          const stored = await rows(log);
          await index.stop();
          const fresh = new EventWaitsIndex(log);
          await fresh.rebuild();
          expect(holdings(fresh)).toEqual(resumed);
          expect(await rows(log)).toEqual(stored);
          await fresh.stop();
          await log.close();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 40 },
    );
  });

  it('starts from its stored rows and the records after its checkpoint, without folding the log again', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-event-waits-'));
    try {
      let log = await openLevelLog(dir);
      let index = new EventWaitsIndex(log);
      await index.start();
      await log.append('exec:e0', [{ type: 'step.waiting', data: { kind: 'event', waitId: 'w0', name: 'paid', stepId: 's0' } }]);
      await log.append('event:ev1', [{ type: 'event.published', data: { name: 'paid', data: 1 } }]);
      await index.waitFor(log.head());
      await index.stop();
      await log.close();

      log = await openLevelLog(dir);
      index = new EventWaitsIndex(log);
      const folded: number[] = [];
      const apply = index.apply.bind(index);
      index.apply = (records, writes) => {
        folded.push(...records.map((r) => r.seq));
        apply(records, writes);
      };
      await log.append('exec:e1', [{ type: 'step.waiting', data: { kind: 'event', waitId: 'w0', name: 'paid', stepId: 's0' } }]);
      await index.start();
      expect(folded).toEqual([3]);
      expect(index.waitingFor('paid').sort()).toEqual(['e0', 'e1']);
      expect(index.pendingFor('e0')).toEqual([{ eventId: 'ev1', name: 'paid', data: 1 }]);
      await index.stop();
      await log.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
