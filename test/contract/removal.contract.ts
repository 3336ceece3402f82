/**
 * The contract of the removal capability (`EventLog.removal`, src/log/capabilities.ts), which
 * retention uses: every store registers this suite with a factory and must pass it unchanged. The
 * factory opens a fresh, empty log; `reopen` (stores that outlive their process) closes a log and
 * opens the same store again. Registered by the memory and LevelDB stores
 * (test/log/stream-removal.test.ts) and PostgreSQL (test/log/pg-stream-removal.test.ts).
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventLog, LogRecord } from '../../src/log/types.js';

export interface RemovalStoreFactory {
  open(): Promise<EventLog>;
  /** closes `log` and opens its store again (absent: the store does not outlive the log) */
  reopen?(log: EventLog): Promise<EventLog>;
}

function removalOf(log: EventLog) {
  if (!log.removal) throw new Error('the store declares no removal capability');
  return log.removal;
}

const allRecords = (log: EventLog) => log.readGlobal(1, Number.MAX_SAFE_INTEGER);

function caughtUp(log: EventLog, afterSeq: number): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  return new Promise((resolve) => {
    const sub = log.subscribe(afterSeq, (r) => out.push(r));
    const check = () => {
      if (out.length > 0 && out[out.length - 1].seq === log.head()) {
        sub.unsubscribe();
        resolve(out);
      } else setTimeout(check, 5);
    };
    check();
  });
}

export function runRemovalContract(name: string, store: RemovalStoreFactory): void {
  describe(`removal contract: ${name}`, () => {
    const opened: EventLog[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((l) => l.close()));
    });
    const open = async () => {
      const log = await store.open();
      opened.push(log);
      return log;
    };

    it('removes a whole stream: its head is 0, reads and listings skip it, other streams and the head stay', async () => {
      const log = await open();
      await log.append('exec:a', [{ type: 'execution.started', data: 1, kind: 'wf@1' }]);
      await log.append('exec:b', [{ type: 'execution.started', data: 2, kind: 'wf@1' }]);
      await log.append('exec:a', [
        { type: 'step.completed', data: 3 },
        { type: 'execution.completed', data: 4 },
      ]);
      await log.append('exec:b', [{ type: 'execution.completed', data: 5 }]);
      const before = log.head();
      expect(await removalOf(log).removeStream('exec:a')).toBe(3);
      expect(await log.streamHead('exec:a')).toBe(0);
      expect(await log.readStream('exec:a')).toEqual([]);
      expect((await log.listStreams('exec:')).map((s) => s.stream)).toEqual(['exec:b']);
      expect((await allRecords(log)).map((r) => [r.stream, r.streamSeq])).toEqual([
        ['exec:b', 1],
        ['exec:b', 2],
      ]);
      expect((await log.readGlobal(1, before, 1)).map((r) => r.seq)).toEqual([2]);
      expect(log.head()).toBe(before);
      expect((await caughtUp(log, 0)).map((r) => r.seq)).toEqual([2, 5]);
      expect(await removalOf(log).removedRecords()).toBe(3);
      expect(await removalOf(log).removeStream('exec:a')).toBe(0);
      await removalOf(log).compact();
      if (log.integrity) expect(await log.integrity.check()).toMatchObject({ ok: true, problems: [] });
    });

    it('starts a stream of a removed id again at streamSeq 1, with new global sequences', async () => {
      const log = await open();
      await log.append('exec:a', [{ type: 'execution.started', data: 1, kind: 'wf@1' }]);
      await log.append('exec:a', [{ type: 'execution.completed', data: 2 }]);
      await removalOf(log).removeStream('exec:a');
      const again = await log.append('exec:a', [{ type: 'execution.started', data: 3, kind: 'wf@1' }], { expectedStreamSeq: 0 });
      expect(again.records[0]).toMatchObject({ seq: 3, streamSeq: 1 });
      expect((await log.readStream('exec:a')).map((r) => r.data)).toEqual([3]);
    });

    it('removes a long stream in bounded writes, whatever the batch size', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 7 }), async (appends, batch) => {
          const log = await open();
          for (const [i, n] of appends.entries()) {
            await log.append(
              'exec:long',
              Array.from({ length: n }, (_, j) => ({ type: 't', data: [i, j] })),
            );
            await log.append('exec:keep', [{ type: 't', data: i }]);
          }
          const total = appends.reduce((a, b) => a + b, 0);
          expect(await removalOf(log).removeStream('exec:long', batch)).toBe(total);
          expect(await log.streamHead('exec:long')).toBe(0);
          expect((await allRecords(log)).map((r) => r.stream)).toEqual(appends.map(() => 'exec:keep'));
          expect(await log.streamHead('exec:keep')).toBe(appends.length);
          if (log.integrity) expect((await log.integrity.check()).problems).toEqual([]);
        }),
        { numRuns: 15 },
      );
    });

    // a store that does not outlive its log has no reopen to check: the case is not registered, not skipped
    const reopen = store.reopen;
    if (reopen)
      it('never hands out a removed sequence again, even after removing the newest records and reopening', async () => {
        let log = await open();
        await log.append('exec:a', [{ type: 'execution.started', data: 1, kind: 'wf@1' }]);
        await log.append('exec:b', [{ type: 'execution.started', data: 2, kind: 'wf@1' }]);
        await removalOf(log).removeStream('exec:b');
        opened.splice(opened.indexOf(log), 1);
        log = await reopen(log);
        opened.push(log);
        expect(log.head()).toBe(2);
        const next = await log.append('exec:c', [{ type: 'execution.started', data: 3, kind: 'wf@1' }]);
        expect(next.lastSeq).toBe(3);
        expect(await removalOf(log).removedRecords()).toBe(1);
        if (log.integrity) expect((await log.integrity.check()).problems).toEqual([]);
      });
  });
}
