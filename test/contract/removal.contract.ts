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

    it('removes many streams in a few writes: each named stream goes whole, the others stay, one named twice counts once', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ stream: fc.nat(11), n: fc.integer({ min: 1, max: 4 }) }), { minLength: 1, maxLength: 30 }),
          fc.shuffledSubarray([...Array(12).keys()]),
          fc.integer({ min: 1, max: 9 }),
          async (appends, gone, batch) => {
            const log = await open();
            // exec:s1 and exec:s10 share a prefix: removing one must leave the other
            for (const { stream, n } of appends)
              await log.append(
                `exec:s${stream}`,
                Array.from({ length: n }, (_, j) => ({ type: 't', data: j })),
              );
            const count = (k: number) => appends.filter((a) => a.stream === k).reduce((t, a) => t + a.n, 0);
            const removed = gone.reduce((t, k) => t + count(k), 0);
            const named = [...gone, ...gone.slice(0, 1)].map((k) => `exec:s${k}`);
            expect(await removalOf(log).removeStreams(named, batch)).toBe(removed);
            for (let k = 0; k < 12; k++) expect(await log.streamHead(`exec:s${k}`)).toBe(gone.includes(k) ? 0 : count(k));
            expect((await allRecords(log)).map((r) => r.stream)).toEqual(appends.filter((a) => !gone.includes(a.stream)).flatMap((a) => Array<string>(a.n).fill(`exec:s${a.stream}`)));
            expect(await removalOf(log).removedRecords()).toBe(removed);
            expect(await removalOf(log).removeStreams(named, batch)).toBe(0);
            if (log.integrity) expect((await log.integrity.check()).problems).toEqual([]);
          },
        ),
        { numRuns: 15 },
      );
    });

    it('reads the last record of many streams at once, counting an append already accepted, and none of a stream without records', async () => {
      const log = await open();
      await log.append('exec:a', [
        { type: 'x', data: 1 },
        { type: 'y', data: 2 },
      ]);
      await log.append('exec:b', [{ type: 'x', data: 3 }]);
      await log.append('exec:gone', [{ type: 'x', data: 4 }]);
      await removalOf(log).removeStream('exec:gone');
      const accepted = log.append('exec:b', [{ type: 'z', data: 5 }]);
      const lasts = await removalOf(log).lastRecords(['exec:b', 'exec:none', 'exec:a', 'exec:gone']);
      expect(lasts.map((r) => r && [r.stream, r.streamSeq, r.type, r.data])).toEqual([['exec:b', 2, 'z', 5], undefined, ['exec:a', 2, 'y', 2], undefined]);
      expect(lasts[0]!.seq).toBe((await accepted).lastSeq);
    });

    it('lists the streams under many prefixes at once, in id order', async () => {
      const log = await open();
      for (const s of ['exec:c/1', 'exec:a/2/x', 'exec:a', 'exec:ab/1', 'exec:b', 'exec:a/1', 'exec:gone/1']) await log.append(s, [{ type: 't', data: s }]);
      await removalOf(log).removeStream('exec:gone/1');
      expect(await removalOf(log).streamsUnder(['exec:a/', 'exec:b/', 'exec:c/', 'exec:gone/', 'exec:'])).toEqual([
        ['exec:a/1', 'exec:a/2/x'],
        [],
        ['exec:c/1'],
        [],
        ['exec:a', 'exec:a/1', 'exec:a/2/x', 'exec:ab/1', 'exec:b', 'exec:c/1'],
      ]);
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
