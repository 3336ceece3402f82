/**
 * The execution feed's SSE readers under any interleaving of commits, attaches from any cursor and
 * hang-ups: each reader gets every record after its cursor exactly once and in order, then the
 * result frame, however many readers share a catch-up read or are caught up from the records kept
 * in memory; readers that hang up are dropped, and nothing stays registered once all are gone.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { EventLog } from '../../src/log/types.js';
import type { SseSink } from '../../src/contract/routes.js';
import { ExecutionFanout } from '../../src/workflows/execution-fanout.js';

const STREAM = 'exec:p1';
const decoder = new TextDecoder();

function fakeSink() {
  const ids: string[] = [];
  let closed = false;
  let onClose: ((reason: 'ended' | 'aborted' | 'slow') => void) | undefined;
  const sink: SseSink = {
    get closed() {
      return closed;
    },
    send: (f) => {
      if (closed) return false;
      const text = decoder.decode(f);
      ids.push(`${text.match(/^event: (.*)$/m)?.[1]}#${text.match(/^id: (.*)$/m)?.[1]}`);
      return true;
    },
    end: () => {
      if (closed) return;
      closed = true;
      onClose?.('ended');
    },
    onClose: (l) => (closed ? l('ended') : (onClose = l)),
  };
  const hangUp = () => {
    if (closed) return;
    closed = true;
    onClose?.('aborted');
  };
  return { sink, ids, hangUp, ended: () => closed };
}

/** A log whose reads answer a few turns after they read, so commits land while catch-up reads are in flight. */
function slowReads(log: EventLog, reads: { n: number }): EventLog {
  const ticks = async (n: number) => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };
  return new Proxy(log, {
    get(target, prop, receiver) {
      if (prop === 'readStream')
        return async (...args: Parameters<EventLog['readStream']>) => {
          reads.n++;
          const records = await target.readStream(...args);
          await ticks(1 + (reads.n % 3));
          return records;
        };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

const step = (i: number) => ({ type: 'step.started', data: { stepIndex: i, stepId: `s${i}`, stepName: `s${i}`, stepType: 'andThen', input: {} } });

type Op = { kind: 'commit'; count: number } | { kind: 'attach'; cursor: number; settle: boolean } | { kind: 'hangUp'; which: number } | { kind: 'tick' };
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('commit' as const), count: fc.integer({ min: 1, max: 3 }) }), weight: 3 },
  // attaches weigh most, so crowds form and later readers are caught up from the records kept in memory
  { arbitrary: fc.record({ kind: fc.constant('attach' as const), cursor: fc.integer({ min: 0, max: 30 }), settle: fc.boolean() }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('hangUp' as const), which: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('tick' as const) }), weight: 2 },
);

describe('execution feed readers (property)', () => {
  it("share one read of a stream's first record among concurrent callers, and read again after a shared miss", async () => {
    const reads = { n: 0 };
    const log = slowReads(createMemoryLog(), reads);
    const feeds = new ExecutionFanout(log);
    feeds.start();
    const early = feeds.firstRecord(STREAM);
    // the stream starts while the first read (which found nothing) is still on its way back
    await log.append(STREAM, [{ type: 'execution.started', data: { workflowName: 'W', input: {}, createdAt: 0 } }]);
    const joined = feeds.firstRecord(STREAM);
    expect(await early).toBeUndefined();
    expect((await joined)?.type).toBe('execution.started');
    expect(reads.n).toBe(2);
    const crowd = await Promise.all(Array.from({ length: 10 }, () => feeds.firstRecord(STREAM)));
    expect(crowd.every((r) => r?.type === 'execution.started')).toBe(true);
    expect(reads.n).toBe(3);
  });

  it('catch a crowd up with one read: readers attaching later from a cursor in memory cause no read', async () => {
    const reads = { n: 0 };
    const log = slowReads(createMemoryLog(), reads);
    const feeds = new ExecutionFanout(log);
    feeds.start();
    await log.append(STREAM, [{ type: 'execution.started', data: { workflowName: 'W', input: {}, createdAt: 0 } }, step(1), step(2)]);
    const first = Array.from({ length: 20 }, () => fakeSink());
    await Promise.all(first.map((r) => feeds.attachSse(STREAM, 0, r.sink)));
    expect(reads.n).toBe(1);
    const later = Array.from({ length: 20 }, () => fakeSink());
    await Promise.all(later.map((r, i) => feeds.attachSse(STREAM, i % 4, r.sink)));
    expect(reads.n).toBe(1);
    expect(feeds.cachedRecord(STREAM, 1)?.type).toBe('execution.started');
    for (const [i, r] of later.entries()) expect(r.ids).toEqual(['workflow-start#1', 'step-start#2', 'step-start#3'].slice(i % 4));
    for (const r of first) expect(r.ids).toEqual(['workflow-start#1', 'step-start#2', 'step-start#3']);
    for (const r of [...first, ...later]) r.hangUp();
    expect(feeds.sseReaderCount(STREAM)).toBe(0);
    expect(feeds.watchedStreams).toBe(0);
    expect(feeds.cachedRecord(STREAM, 1)).toBeUndefined();
  });

  it('give each reader every record after its cursor once, in order, then the result frame unless its cursor is past it, and leave nothing registered', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const reads = { n: 0 };
        const log = slowReads(createMemoryLog(), reads);
        const feeds = new ExecutionFanout(log);
        feeds.start();
        await log.append(STREAM, [{ type: 'execution.started', data: { workflowName: 'W', input: {}, createdAt: 0 } }]);
        let seq = 1;
        const readers: Array<{ cursor: number; hungUpAt?: number } & ReturnType<typeof fakeSink>> = [];
        const pending: Array<Promise<unknown>> = [];
        for (const o of ops) {
          if (o.kind === 'commit') {
            const recs = Array.from({ length: o.count }, (_, i) => step(seq + i));
            seq += o.count;
            pending.push(log.append(STREAM, recs));
          } else if (o.kind === 'attach') {
            const r = { cursor: o.cursor, ...fakeSink() };
            readers.push(r);
            const attached = feeds.attachSse(STREAM, o.cursor, r.sink);
            if (o.settle) await attached;
            else if (attached) pending.push(attached);
          } else if (o.kind === 'hangUp' && readers.length > 0) {
            const r = readers[o.which % readers.length];
            if (!r.ended()) {
              r.hungUpAt = r.ids.length;
              r.hangUp();
            }
          } else await new Promise((r) => setImmediate(r));
        }
        await Promise.all(pending);
        await log.append(STREAM, [{ type: 'execution.completed', data: { result: 1, workflowName: 'W' } }]);
        const last = seq + 1;
        for (let i = 0; i < 20 && readers.some((r) => !r.ended()); i++) await new Promise((r) => setImmediate(r));
        for (const r of readers) {
          expect(r.ended()).toBe(true);
          const expected: string[] = [];
          for (let s = r.cursor + 1; s <= last; s++) expected.push(s === 1 ? 'workflow-start#1' : s === last ? `workflow-complete#${s}` : `step-start#${s}`);
          // the result frame's id is last + 1: a cursor at or past it has seen everything
          if (r.cursor < last + 1) expected.push(`workflow-result#${last + 1}`);
          if (r.hungUpAt !== undefined) expect(r.ids).toEqual(expected.slice(0, r.hungUpAt));
          else expect(r.ids).toEqual(expected);
        }
        expect(feeds.watchedStreams).toBe(0);
        expect(feeds.sseReaderCount(STREAM)).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
