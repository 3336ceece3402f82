/**
 * The EventLog contract suite (docs/design-notes.md "The event log contract"): every implementation registers it with a factory
 * and must pass it unchanged. `factory(clock)` opens a fresh, empty log that uses `clock` for
 * records appended without `at`; the suite closes every log it opened.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LogClosedError, StreamConflictError, type EventLog, type LogRecord } from '../../src/log/types.js';
import { until } from '../helpers/until.js';

export type EventLogFactory = (clock: () => number) => EventLog | Promise<EventLog>;

/**
 * Resolves once a fresh subscriber has been handed every record up to `seq`: the log delivers in
 * one order to every subscriber, so a subscriber that should have received a record by then has.
 */
async function delivered(log: EventLog, seq: number): Promise<void> {
  let last = 0;
  const probe = log.subscribe(0, (r) => (last = r.seq));
  await until(() => last >= seq, `delivery of record ${seq}`);
  probe.unsubscribe();
}

export function runEventLogContract(name: string, factory: EventLogFactory): void {
  describe(`EventLog contract: ${name}`, () => {
    const opened: EventLog[] = [];
    let now = 1_700_000_000_000;
    const clock = () => now;
    const open = async () => {
      const log = await factory(clock);
      opened.push(log);
      return log;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((l) => l.close()));
    });

    describe('append and read', () => {
      it('assigns gap-free global and per-stream sequences and returns the committed records', async () => {
        const log = await open();
        const a = await log.append('exec:a', [
          { type: 'execution.started', data: { x: 1 } },
          { type: 'step.started', data: null },
        ]);
        const b = await log.append('exec:b', [{ type: 'execution.started', data: 'b' }]);
        const c = await log.append('exec:a', [{ type: 'step.completed', data: [1, 2] }]);
        expect(a.records.map((r) => [r.seq, r.streamSeq])).toEqual([
          [1, 1],
          [2, 2],
        ]);
        expect([a.lastSeq, a.lastStreamSeq]).toEqual([2, 2]);
        expect([b.lastSeq, b.lastStreamSeq]).toEqual([3, 1]);
        expect([c.lastSeq, c.lastStreamSeq]).toEqual([4, 3]);
        expect(log.head()).toBe(4);
      });

      it('reads back exactly what append returned, from the stream and from the global order', async () => {
        const log = await open();
        const a = await log.append('exec:a', [
          { type: 'execution.started', data: { input: { n: 1, s: 'é😀' } }, kind: 'workflow-execution@1', correlation: 'req-1' },
          { type: 'step.completed', data: { out: [true, null, 2.5] }, at: 42, causation: 1 },
        ]);
        const b = await log.append('run:b', [{ type: 'run.started', data: {} }]);
        const all = [...a.records, ...b.records];
        expect(await log.readStream('exec:a')).toStrictEqual(a.records);
        expect(await log.readGlobal(1)).toStrictEqual(all);
        expect(a.records[0]).toStrictEqual({
          seq: 1,
          stream: 'exec:a',
          streamSeq: 1,
          type: 'execution.started',
          data: { input: { n: 1, s: 'é😀' } },
          at: now,
          kind: 'workflow-execution@1',
          correlation: 'req-1',
        });
        expect(a.records[1].at).toBe(42);
        expect(a.records[1].causation).toBe(1);
      });

      it('stores a copy: mutating the data after append does not change history', async () => {
        const log = await open();
        const data = { list: [1] };
        await log.append('s', [{ type: 't', data }]);
        data.list.push(2);
        expect((await log.readStream('s'))[0].data).toEqual({ list: [1] });
      });

      it('stores undefined data as null', async () => {
        const log = await open();
        const r = await log.append('s', [{ type: 't', data: undefined }]);
        expect(r.records[0].data).toBeNull();
        expect((await log.readGlobal(1))[0].data).toBeNull();
      });

      it('rejects invalid appends without using up a sequence', async () => {
        const log = await open();
        await expect(log.append('s', [])).rejects.toThrow(TypeError);
        await expect(log.append('s', [{ type: '', data: 1 }])).rejects.toThrow(/type/);
        await expect(log.append('s', [{ type: 't', data: 1n }])).rejects.toThrow(/data/);
        await expect(log.append('', [{ type: 't', data: 1 }])).rejects.toThrow(/stream/);
        await expect(log.append('a\u0000b', [{ type: 't', data: 1 }])).rejects.toThrow(/NUL/);
        const ok = await log.append('s', [{ type: 't', data: 1 }]);
        expect([ok.lastSeq, ok.lastStreamSeq]).toEqual([1, 1]);
      });

      it('refuses names with lone surrogates, which cannot be told apart on disk', async () => {
        const log = await open();
        await log.append('a\ufffd', [{ type: 't', data: 1 }]);
        await expect(log.append('a\ud800', [{ type: 't', data: 2 }])).rejects.toThrow(/surrogate/);
        expect(await log.readStream('a\ud800')).toEqual([]);
        expect(await log.streamHead('a\ud800')).toBe(0);
        await log.kv.put('k\ufffd', 1);
        await expect(log.kv.put('k\udc00', 2)).rejects.toThrow(TypeError);
        await expect(log.kv.get('k\udc00')).rejects.toThrow(TypeError);
        expect(await log.kv.get('k\ufffd')).toBe(1);
      });

      it('serves stream ranges inclusively and clamps them to what exists', async () => {
        const log = await open();
        for (let i = 0; i < 5; i++) {
          await log.append('s', [{ type: 't', data: i }]);
          await log.append('other', [{ type: 't', data: -i }]);
        }
        await log.append(
          's',
          [3, 4, 5, 6].map((i) => ({ type: 'many', data: i + 2 })),
        );
        const data = async (from?: number, to?: number) => (await log.readStream('s', from, to)).map((r) => r.data);
        expect(await data()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
        expect(await data(2, 4)).toEqual([1, 2, 3]);
        expect(await data(5, 7)).toEqual([4, 5, 6]);
        expect(await data(7)).toEqual([6, 7, 8]);
        expect(await data(0, 1)).toEqual([0]);
        expect(await data(9)).toEqual([8]);
        expect(await data(4, 3)).toEqual([]);
        expect(await data(8, 100)).toEqual([7, 8]);
        expect(await log.readStream('missing')).toEqual([]);
        expect((await log.readStream('s')).map((r) => r.streamSeq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      });

      it('serves global ranges with an optional upper bound and limit', async () => {
        const log = await open();
        for (let i = 1; i <= 10; i++) await log.append(`s${i % 3}`, [{ type: 't', data: i }]);
        const seqs = async (from: number, to?: number, limit?: number) => (await log.readGlobal(from, to, limit)).map((r) => r.seq);
        expect(await seqs(1)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        expect(await seqs(4, 6)).toEqual([4, 5, 6]);
        expect(await seqs(4, undefined, 2)).toEqual([4, 5]);
        expect(await seqs(8, 100, 5)).toEqual([8, 9, 10]);
        expect(await seqs(11)).toEqual([]);
        expect(await seqs(0, 2)).toEqual([1, 2]);
        expect(await seqs(5, 4)).toEqual([]);
        expect(await seqs(1.5, 3.5)).toEqual([2, 3]);
        expect(await seqs(1, 10, 0)).toEqual([]);
      });

      it('reports heads: 0 when empty, then the last committed sequence', async () => {
        const log = await open();
        expect(log.head()).toBe(0);
        expect(await log.streamHead('s')).toBe(0);
        await log.append('s', [
          { type: 't', data: 1 },
          { type: 't', data: 2 },
        ]);
        await log.append('u', [{ type: 't', data: 3 }]);
        expect(log.head()).toBe(3);
        expect(await log.streamHead('s')).toBe(2);
        expect(await log.streamHead('u')).toBe(1);
        expect(await log.streamHead('nope')).toBe(0);
      });

      it('counts an append still in flight in streamHead, readable at that head', async () => {
        const log = await open();
        const pending = log.append('s', [
          { type: 'a', data: 1 },
          { type: 'b', data: 2 },
        ]);
        const head = await log.streamHead('s');
        expect(head).toBe(2);
        expect((await log.readStream('s', head, head)).map((r) => r.type)).toEqual(['b']);
        await log.append('s', [{ type: 'c', data: 3 }], { expectedStreamSeq: head });
        await pending;
      });

      it('assigns global sequences in call order, new streams included', async () => {
        const log = await open();
        await log.append('old', [{ type: 't', data: 0 }]);
        const order = ['new:1', 'old', 'new:2', 'new:1', 'old', 'new:3'];
        const results = await Promise.all(order.map((s, i) => log.append(s, [{ type: 't', data: i }])));
        expect(results.map((r) => r.lastSeq)).toEqual([2, 3, 4, 5, 6, 7]);
        expect(results.map((r) => r.lastStreamSeq)).toEqual([1, 2, 1, 2, 3, 1]);
      });

      it('keeps each append atomic and contiguous under concurrent appenders', async () => {
        const log = await open();
        const results = await Promise.all(
          Array.from({ length: 60 }, (_, i) =>
            log.append(`s${i % 4}`, [
              { type: 'a', data: i },
              { type: 'b', data: i },
            ]),
          ),
        );
        for (const r of results) expect(r.records[1].seq).toBe(r.records[0].seq + 1);
        const all = await log.readGlobal(1);
        expect(all.map((r) => r.seq)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
        for (let s = 0; s < 4; s++) {
          expect((await log.readStream(`s${s}`)).map((r) => r.streamSeq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
        }
      });
    });

    describe('expectedStreamSeq', () => {
      it('accepts the current head (0 for a new stream)', async () => {
        const log = await open();
        await log.append('s', [{ type: 't', data: 1 }], { expectedStreamSeq: 0 });
        const r = await log.append('s', [{ type: 't', data: 2 }], { expectedStreamSeq: 1 });
        expect(r.lastStreamSeq).toBe(2);
      });

      it('rejects a mismatch with StreamConflictError and writes nothing', async () => {
        const log = await open();
        await log.append('s', [{ type: 't', data: 1 }]);
        const err = await log.append('s', [{ type: 't', data: 2 }], { expectedStreamSeq: 0 }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(StreamConflictError);
        expect(err).toMatchObject({ stream: 's', expected: 0, actual: 1 });
        expect(log.head()).toBe(1);
        const next = await log.append('t', [{ type: 't', data: 3 }]);
        expect(next.lastSeq).toBe(2);
      });

      it('lets only one of two writers racing on the same head win', async () => {
        const log = await open();
        const outcomes = await Promise.allSettled([log.append('s', [{ type: 'first', data: 1 }], { expectedStreamSeq: 0 }), log.append('s', [{ type: 'second', data: 2 }], { expectedStreamSeq: 0 })]);
        expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
        expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(StreamConflictError);
        expect((await log.readStream('s')).map((r) => r.type)).toEqual(['first']);
      });
    });

    describe('subscribe', () => {
      it('catches up from storage, then delivers live commits, each once and in order', async () => {
        const log = await open();
        for (let i = 0; i < 5; i++) await log.append(`s${i % 2}`, [{ type: 't', data: i }]);
        const seen: number[] = [];
        const sub = log.subscribe(0, (r) => seen.push(r.seq));
        await until(() => seen.length === 5, 'catch-up');
        await Promise.all([
          log.append('s0', [{ type: 't', data: 5 }]),
          log.append('s9', [
            { type: 't', data: 6 },
            { type: 't', data: 7 },
          ]),
        ]);
        await until(() => seen.length === 8, 'live records');
        expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
        sub.unsubscribe();
      });

      it('starts after the given sequence', async () => {
        const log = await open();
        for (let i = 0; i < 6; i++) await log.append('s', [{ type: 't', data: i }]);
        const seen: number[] = [];
        log.subscribe(4, (r) => seen.push(r.seq));
        await until(() => seen.length === 2);
        await log.append('s', [{ type: 't', data: 6 }]);
        await until(() => seen.length === 3);
        expect(seen).toEqual([5, 6, 7]);
      });

      it('waits for records beyond the head when subscribing past it', async () => {
        const log = await open();
        await log.append('s', [{ type: 't', data: 0 }]);
        const seen: number[] = [];
        log.subscribe(3, (r) => seen.push(r.seq));
        for (let i = 0; i < 4; i++) await log.append('s', [{ type: 't', data: i }]);
        await until(() => seen.length === 2);
        expect(seen).toEqual([4, 5]);
      });

      it('never calls back before subscribe returns', async () => {
        const log = await open();
        await log.append('s', [{ type: 't', data: 0 }]);
        let returned = false;
        let calledEarly = false;
        const seen: LogRecord[] = [];
        log.subscribe(0, (r) => {
          if (!returned) calledEarly = true;
          seen.push(r);
        });
        returned = true;
        await until(() => seen.length === 1);
        expect(calledEarly).toBe(false);
      });

      it('delivers records committed during catch-up exactly once', async () => {
        const log = await open();
        await Promise.all(Array.from({ length: 50 }, (_, i) => log.append(`s${i % 5}`, [{ type: 't', data: i }])));
        const seen: number[] = [];
        log.subscribe(0, (r) => seen.push(r.seq));
        const writes: Promise<unknown>[] = [];
        for (let i = 0; i < 50; i++) writes.push(log.append(`s${i % 7}`, [{ type: 'u', data: i }]));
        await Promise.all(writes);
        await until(() => seen.length >= 100);
        // a second subscriber that has read everything proves the first was handed nothing more
        await delivered(log, 100);
        expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
      });

      it('gives every subscriber the same records as readGlobal', async () => {
        const log = await open();
        const a: LogRecord[] = [];
        const b: LogRecord[] = [];
        log.subscribe(0, (r) => a.push(r));
        await Promise.all(Array.from({ length: 20 }, (_, i) => log.append(`s${i % 3}`, [{ type: 't', data: { i } }])));
        log.subscribe(0, (r) => b.push(r));
        await until(() => a.length === 20 && b.length === 20);
        const stored = await log.readGlobal(1);
        expect(a).toEqual(stored);
        expect(b).toEqual(stored);
      });

      it('stops delivering after unsubscribe', async () => {
        const log = await open();
        const seen: number[] = [];
        const sub = log.subscribe(0, (r) => seen.push(r.seq));
        await log.append('s', [{ type: 't', data: 1 }]);
        await until(() => seen.length === 1);
        sub.unsubscribe();
        sub.unsubscribe();
        await log.append('s', [{ type: 't', data: 2 }]);
        await delivered(log, 2);
        expect(seen).toEqual([1]);
      });

      it('keeps the global order when a subscriber appends from its callback', async () => {
        const log = await open();
        const first: number[] = [];
        const second: number[] = [];
        log.subscribe(0, (r) => {
          first.push(r.seq);
          if (r.type === 'ping') void log.append('echo', [{ type: 'pong', data: r.seq }]);
        });
        log.subscribe(0, (r) => second.push(r.seq));
        for (let i = 0; i < 3; i++) await log.append('s', [{ type: 'ping', data: i }]);
        await until(() => first.length === 6 && second.length === 6);
        expect(first).toEqual([1, 2, 3, 4, 5, 6]);
        expect(second).toEqual([1, 2, 3, 4, 5, 6]);
      });
    });

    describe('checkpoints', () => {
      it('returns 0 for an unknown projection and the last value written otherwise', async () => {
        const log = await open();
        expect(await log.getCheckpoint('executions')).toBe(0);
        await log.setCheckpoint('executions', 5);
        await log.setCheckpoint('traces', 2);
        await log.setCheckpoint('executions', 9);
        expect(await log.getCheckpoint('executions')).toBe(9);
        expect(await log.getCheckpoint('traces')).toBe(2);
      });

      it('rejects a checkpoint that is not a non-negative integer', async () => {
        const log = await open();
        await expect(log.setCheckpoint('p', -1)).rejects.toThrow(RangeError);
        await expect(log.setCheckpoint('p', 1.5)).rejects.toThrow(RangeError);
        expect(await log.getCheckpoint('p')).toBe(0);
      });
    });

    describe('kv', () => {
      it('gets, puts, overwrites and deletes JSON values', async () => {
        const log = await open();
        expect(await log.kv.get('a')).toBeUndefined();
        await log.kv.put('a', { n: 1, list: ['x'] });
        expect(await log.kv.get('a')).toEqual({ n: 1, list: ['x'] });
        await log.kv.put('a', 2);
        expect(await log.kv.get('a')).toBe(2);
        await log.kv.put('falsy', 0);
        expect(await log.kv.get('falsy')).toBe(0);
        await log.kv.del('a');
        expect(await log.kv.get('a')).toBeUndefined();
        await log.kv.del('never-there');
      });

      it('sees its own pending writes before they are awaited', async () => {
        const log = await open();
        const put = log.kv.put('k', 'v1');
        expect(await log.kv.get('k')).toBe('v1');
        const del = log.kv.del('k');
        expect(await log.kv.get('k')).toBeUndefined();
        await Promise.all([put, del]);
        expect(await log.kv.get('k')).toBeUndefined();
      });

      it('writes several puts and deletes in one call, in order, seen before they are awaited and stored after', async () => {
        const log = await open();
        await log.kv.put('w/gone', 1);
        const many = log.kv.writeMany([
          ['w/a', JSON.stringify({ n: 1 })],
          ['w/gone', undefined],
          ['w/b', '"bee"'],
          ['w/a', '2'],
        ]);
        expect(await log.kv.getMany(['w/a', 'w/b', 'w/gone'])).toEqual([2, 'bee', undefined]);
        expect(await log.kv.range({ gte: 'w/', lt: 'w0' })).toEqual([
          ['w/a', 2],
          ['w/b', 'bee'],
        ]);
        await many;
        expect(await log.kv.getMany(['w/a', 'w/b', 'w/gone'])).toEqual([2, 'bee', undefined]);
        await log.kv.writeMany([]);
        await expect(log.kv.writeMany([['k\udc00', '1']])).rejects.toThrow(TypeError);
      });

      it('gets several keys in one call, in their order, with pending writes and absent keys', async () => {
        const log = await open();
        await log.kv.put('m/a', { n: 1 });
        await log.kv.put('m/b\u0000x', 'bee');
        await log.kv.put('m/gone', 3);
        const pending = [log.kv.put('m/c', [3]), log.kv.del('m/gone')];
        expect(await log.kv.getMany(['m/c', 'm/missing', 'm/b\u0000x', 'm/gone', 'm/a', 'm/a'])).toEqual([[3], undefined, 'bee', undefined, { n: 1 }, { n: 1 }]);
        await Promise.all(pending);
        expect(await log.kv.getMany(['m/gone', 'm/c'])).toEqual([undefined, [3]]);
        expect(await log.kv.getMany([])).toEqual([]);
        await expect(log.kv.getMany(['k\udc00'])).rejects.toThrow(TypeError);
      });

      it('rejects values JSON cannot hold', async () => {
        const log = await open();
        await expect(log.kv.put('k', undefined)).rejects.toThrow(TypeError);
        await expect(log.kv.put('k', 1n)).rejects.toThrow(TypeError);
        expect(await log.kv.get('k')).toBeUndefined();
      });

      it('ranges over [gte, lt) in key order, reversed and limited on demand', async () => {
        const log = await open();
        for (const k of ['exec:3', 'exec:1', 'exec:2', 'exec;', 'exea', 'exec:10']) await log.kv.put(k, k.toUpperCase());
        const keys = async (opts: { gte: string; lt: string; reverse?: boolean; limit?: number }) => (await log.kv.range<string>(opts)).map(([k]) => k);
        expect(await keys({ gte: 'exec:', lt: 'exec;' })).toEqual(['exec:1', 'exec:10', 'exec:2', 'exec:3']);
        expect(await keys({ gte: 'exec:', lt: 'exec;', reverse: true })).toEqual(['exec:3', 'exec:2', 'exec:10', 'exec:1']);
        expect(await keys({ gte: 'exec:', lt: 'exec;', limit: 2 })).toEqual(['exec:1', 'exec:10']);
        expect(await keys({ gte: 'exec:', lt: 'exec;', reverse: true, limit: 1 })).toEqual(['exec:3']);
        expect(await keys({ gte: 'exec:', lt: 'exec;', limit: 0 })).toEqual([]);
        expect(await keys({ gte: 'z', lt: 'a' })).toEqual([]);
        expect(await log.kv.range({ gte: 'exec:2', lt: 'exec:3' })).toEqual([['exec:2', 'EXEC:2']]);
      });

      it('orders keys by code point (UTF-8 byte order), astral characters last', async () => {
        const log = await open();
        const ks = ['a\uffff', 'a😀', 'a\u00e9', 'ab', 'a'];
        for (const k of ks) await log.kv.put(k, 1);
        const got = (await log.kv.range({ gte: 'a', lt: 'b' })).map(([k]) => k);
        expect(got).toEqual(['a', 'ab', 'a\u00e9', 'a\uffff', 'a😀']);
      });

      it('merges pending writes into ranges', async () => {
        const log = await open();
        for (const k of ['k1', 'k2', 'k3', 'k4']) await log.kv.put(k, k);
        const writes = [log.kv.del('k1'), log.kv.del('k2'), log.kv.put('k0', 'new'), log.kv.put('k3', 'changed')];
        expect(await log.kv.range({ gte: 'k', lt: 'l', limit: 3 })).toEqual([
          ['k0', 'new'],
          ['k3', 'changed'],
          ['k4', 'k4'],
        ]);
        await Promise.all(writes);
        expect(await log.kv.range({ gte: 'k', lt: 'l', reverse: true, limit: 2 })).toEqual([
          ['k4', 'k4'],
          ['k3', 'changed'],
        ]);
      });
    });

    describe('listStreams', () => {
      it('lists the streams under a prefix with their heads, in id order', async () => {
        const log = await open();
        await log.append('exec:b', [
          { type: 't', data: 1 },
          { type: 't', data: 2 },
        ]);
        await log.append('exec:a', [{ type: 't', data: 1 }]);
        await log.append('run:x', [{ type: 't', data: 1 }]);
        await log.append('exec:b', [{ type: 't', data: 3 }]);
        await log.append('exec', [{ type: 't', data: 1 }]);
        await log.append('exec:a\u0001', [{ type: 't', data: 1 }]);
        await log.append('exec:ab', [
          { type: 't', data: 1 },
          { type: 't', data: 2 },
        ]);
        expect(await log.listStreams('exec:')).toEqual([
          { stream: 'exec:a', head: 1 },
          { stream: 'exec:a\u0001', head: 1 },
          { stream: 'exec:ab', head: 2 },
          { stream: 'exec:b', head: 3 },
        ]);
        expect((await log.listStreams('')).map((s) => s.stream)).toEqual(['exec', 'exec:a', 'exec:a\u0001', 'exec:ab', 'exec:b', 'run:x']);
        expect(await log.listStreams('nothing')).toEqual([]);
      });
    });

    describe('close', () => {
      it('finishes appends issued before close, then rejects new work with LogClosedError', async () => {
        const log = await open();
        const pending = log.append('s', [{ type: 't', data: 1 }]);
        const closing = log.close();
        const late = log.append('s', [{ type: 't', data: 2 }]).catch((e: unknown) => e);
        await expect(pending).resolves.toMatchObject({ lastSeq: 1 });
        await closing;
        expect(await late).toBeInstanceOf(LogClosedError);
        await expect(log.append('s', [{ type: 't', data: 3 }])).rejects.toBeInstanceOf(LogClosedError);
        await expect(log.kv.put('k', 1)).rejects.toBeInstanceOf(LogClosedError);
        await expect(log.setCheckpoint('p', 1)).rejects.toBeInstanceOf(LogClosedError);
        await expect(log.readGlobal(1)).rejects.toBeInstanceOf(LogClosedError);
        expect(() => log.subscribe(0, () => {})).toThrow(LogClosedError);
      });

      it('is idempotent', async () => {
        const log = await open();
        await Promise.all([log.close(), log.close()]);
        await log.close();
      });

      it('delivers the final flush to live subscribers before stopping them', async () => {
        const log = await open();
        const seen: number[] = [];
        log.subscribe(0, (r) => seen.push(r.seq));
        await new Promise((r) => setImmediate(r));
        void log.append('s', [{ type: 't', data: 1 }]);
        await log.close();
        expect(seen).toEqual([1]);
      });
    });

    it('uses the injected clock for records without `at`', async () => {
      const log = await open();
      now = 1_800_000_000_000;
      const r = await log.append('s', [{ type: 't', data: 1 }]);
      expect(r.records[0].at).toBe(1_800_000_000_000);
    });
  });
}
