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
import { append, holdings, op } from './event-waits-ops.js';

const rows = (log: LevelEventLog) => log.kv.range({ gte: 'workflow-event-waits/', lt: 'workflow-event-waits0' });

/** Runs `body` with a fresh data directory, removed after. */
async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-event-waits-'));
  try {
    await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const waiting = (waitId: string, name: string) => ({ type: 'step.waiting', data: { kind: 'event', waitId, name, stepId: 's0' } });

/** The log in `dir` and a started index over it. */
async function openIndex(dir: string): Promise<{ log: LevelEventLog; index: EventWaitsIndex }> {
  const log = await openLevelLog(dir);
  const index = new EventWaitsIndex(log);
  await index.start();
  return { log, index };
}

/** Appends `records` with a started index, lets it fold them, and stops both; resolves with who waits for `paid` and `shipped` then. */
async function foldAndStop(dir: string, records: Array<[stream: string, record: { type: string; data: unknown }]>): Promise<string[][]> {
  const { log, index } = await openIndex(dir);
  for (const [stream, record] of records) await log.append(stream, [record]);
  await index.waitFor(log.head());
  const waitingFor = [index.waitingFor('paid'), index.waitingFor('shipped')];
  await index.stop();
  await log.close();
  return waitingFor;
}

describe('the event-waits index', () => {
  it('after stops at random points holds and stores what a full rebuild of the same log does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), (ops) =>
        withDir(async (dir) => {
          let { log, index } = await openIndex(dir);
          const published = new Set<number>();
          for (const o of ops) {
            if (o.op !== 'stop') {
              await append(log, o, published);
              continue;
            }
            if (o.settled) await index.waitFor(log.head());
            await index.stop();
            await log.close();
            ({ log, index } = await openIndex(dir));
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
        }),
      ),
      { numRuns: 40 },
    );
  });

  it('lists a wait opened again under another name for the new name only, folded or loaded from its rows', async () => {
    await withDir(async (dir) => {
      const first = await foldAndStop(dir, [
        ['exec:e0', waiting('w0', 'shipped')],
        ['exec:e0', waiting('w0', 'paid')],
      ]);
      expect(first).toEqual([['e0'], []]);
      const { log, index } = await openIndex(dir);
      expect([index.waitingFor('paid'), index.waitingFor('shipped')]).toEqual([['e0'], []]);
      await index.stop();
      await log.close();
    });
  });

  it('starts from its stored rows and the records after its checkpoint, without folding the log again', async () => {
    await withDir(async (dir) => {
      await foldAndStop(dir, [
        ['exec:e0', waiting('w0', 'paid')],
        ['event:ev1', { type: 'event.published', data: { name: 'paid', data: 1 } }],
      ]);
      const log = await openLevelLog(dir);
      const index = new EventWaitsIndex(log);
      const folded: number[] = [];
      const apply = index.apply.bind(index);
      index.apply = (records, writes) => {
        folded.push(...records.map((r) => r.seq));
        apply(records, writes);
      };
      await log.append('exec:e1', [waiting('w0', 'paid')]);
      await index.start();
      expect(folded).toEqual([3]);
      expect(index.waitingFor('paid').sort()).toEqual(['e0', 'e1']);
      expect(index.pendingFor('e0')).toEqual([{ eventId: 'ev1', name: 'paid', data: 1 }]);
      await index.stop();
      await log.close();
    });
  });
});
