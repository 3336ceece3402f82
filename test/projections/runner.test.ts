import { Subject, type Observable } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { EventLog, KeyValueStore, LogRecord } from '../../src/log/types.js';
import { ProjectionRunner, type ProjectionDefinition, type ProjectionWrites } from '../../src/projections/runner.js';

/** A count per stream, written under `n/<stream>`; records the batches it was handed. */
function counter(opts: { unit?: 'batch' | 'record'; gate?: () => Promise<void> } = {}) {
  const batches: number[][] = [];
  const counts = new Map<string, number>();
  const def: ProjectionDefinition = {
    name: 'counter',
    unit: opts.unit,
    checkpointEvery: 4,
    keyRange: { gte: 'n/', lt: 'n0' },
    accepts: (r) => r.stream.startsWith('c-'),
    reset: () => counts.clear(),
    async apply(records: readonly LogRecord[], writes: ProjectionWrites, kv: KeyValueStore) {
      batches.push(records.map((r) => r.seq));
      await opts.gate?.();
      for (const r of records) {
        const n = counts.get(r.stream) ?? (await kv.get<number>(`n/${r.stream}`)) ?? 0;
        counts.set(r.stream, n + 1);
        writes.put(`n/${r.stream}`, n + 1);
      }
    },
  };
  return { def, batches, counts };
}

function rec(seq: number, stream = 'c-a'): LogRecord {
  return { seq, stream, streamSeq: seq, type: 't', data: null, at: 0 };
}

/** A hand-driven source and scheduler: records arrive when the test says, folds run when it flushes. */
function manual(log: EventLog, def: ProjectionDefinition) {
  const subject = new Subject<LogRecord>();
  const starts: number[] = [];
  const jobs: Array<() => void> = [];
  const runner = new ProjectionRunner(log, def, {
    source: (after): Observable<LogRecord> => {
      starts.push(after);
      return subject;
    },
    schedule: (run) => jobs.push(run),
  });
  const flush = async () => {
    while (jobs.length > 0) jobs.shift()!();
    // let the fold's awaits (kv reads) settle
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  return { runner, subject, starts, flush };
}

describe('projection runner', () => {
  it('folds a synchronous burst of records as one batch and writes the checkpoint with it', async () => {
    const log = createMemoryLog();
    const { def, batches } = counter();
    const { runner, subject, flush } = manual(log, def);
    await runner.start();
    for (let seq = 1; seq <= 3; seq++) subject.next(rec(seq));
    await flush();
    expect(batches).toEqual([[1, 2, 3]]);
    expect(runner.appliedSeq).toBe(3);
    expect(await log.kv.get('n/c-a')).toBe(3);
    expect(await log.getCheckpoint('counter')).toBe(3);
  });

  it('queues what arrives while a fold waits and folds it next, in order (backpressure stays in the runner)', async () => {
    const log = createMemoryLog();
    let open!: () => void;
    let gate: Promise<void> = new Promise((r) => (open = r));
    const { def, batches } = counter({ gate: () => gate });
    const { runner, subject, flush } = manual(log, def);
    await runner.start();
    subject.next(rec(1));
    await flush();
    expect(batches).toEqual([[1]]);
    for (let seq = 2; seq <= 6; seq++) subject.next(rec(seq, seq % 2 ? 'c-a' : 'c-b'));
    await flush();
    // the first fold still waits: nothing more is folded and nothing is lost
    expect(batches).toEqual([[1]]);
    expect(runner.appliedSeq).toBe(0);
    gate = Promise.resolve();
    open();
    await flush();
    expect(batches).toEqual([[1], [2, 3, 4, 5, 6]]);
    expect(runner.appliedSeq).toBe(6);
    expect(await log.kv.get('n/c-a')).toBe(3);
    expect(await log.kv.get('n/c-b')).toBe(3);
  });

  it('with lingerMs, folds records that arrive apart as one batch when nobody waits, and at once for a wait', async () => {
    vi.useFakeTimers();
    try {
      const log = createMemoryLog();
      const { def, batches } = counter();
      const { runner, subject, flush } = manual(log, { ...def, lingerMs: 5 });
      await runner.start();
      subject.next(rec(1));
      await flush();
      expect(batches).toEqual([]); // lingering: nothing folded yet
      vi.advanceTimersByTime(3);
      subject.next(rec(2));
      vi.advanceTimersByTime(2);
      await flush();
      expect(batches).toEqual([[1, 2]]);
      // a wait does not linger: the record folds on the next schedule, without the timer
      subject.next(rec(3));
      const waited = runner.waitFor(3);
      await flush();
      await waited;
      expect(batches).toEqual([[1, 2], [3]]);
      // a wait registered before its record arrives folds it at once too
      const ahead = runner.waitFor(4);
      subject.next(rec(4));
      await flush();
      await ahead;
      expect(batches).toEqual([[1, 2], [3], [4]]);
      // a stop does not wait for a lingering fold
      subject.next(rec(5));
      const stopping = runner.stop();
      await flush();
      await stopping;
    } finally {
      vi.useRealTimers();
    }
  });

  it('moves the position over records it does not read, saving it only every checkpointEvery records', async () => {
    const log = createMemoryLog();
    const { def, batches } = counter({ unit: 'record' });
    const { runner, subject, flush } = manual(log, def);
    await runner.start();
    for (let seq = 1; seq <= 3; seq++) subject.next(rec(seq, 'other'));
    await flush();
    expect(batches).toEqual([]);
    expect(runner.appliedSeq).toBe(3);
    expect(await log.getCheckpoint('counter')).toBe(0);
    subject.next(rec(4, 'other'));
    await flush();
    expect(await log.getCheckpoint('counter')).toBe(4);
  });

  it('folds one record at a time when the definition asks for it', async () => {
    const log = createMemoryLog();
    const { def, batches } = counter({ unit: 'record' });
    const { runner, subject, flush } = manual(log, def);
    await runner.start();
    for (let seq = 1; seq <= 3; seq++) subject.next(rec(seq));
    await flush();
    expect(batches).toEqual([[1], [2], [3]]);
  });

  it('folding one record at a time, takes the records it does not read along with the next one it does', async () => {
    const log = createMemoryLog();
    const { def, batches } = counter({ unit: 'record' });
    const { runner, subject, flush } = manual(log, { ...def, checkpointEvery: 1 });
    const saved = vi.spyOn(log, 'setCheckpoint');
    await runner.start();
    for (const [seq, stream] of [
      [1, 'other'],
      [2, 'c-a'],
      [3, 'other'],
      [4, 'other'],
      [5, 'c-a'],
      [6, 'other'],
    ] as const)
      subject.next(rec(seq, stream));
    await flush();
    expect(batches).toEqual([[2], [5]]);
    // three folds (through 2, through 5, then 6), one checkpoint each, not one per record
    expect(saved.mock.calls.map(([, seq]) => seq)).toEqual([2, 5, 6]);
    expect(runner.appliedSeq).toBe(6);
  });

  it('resolves waitFor once the record is folded, and at once for what is already folded', async () => {
    const log = createMemoryLog();
    const { def } = counter();
    const { runner, subject, flush } = manual(log, def);
    await runner.start();
    let done = false;
    void runner.waitFor(2).then(() => (done = true));
    subject.next(rec(1));
    await flush();
    expect(done).toBe(false);
    subject.next(rec(2));
    await flush();
    expect(done).toBe(true);
    await expect(runner.waitFor(1)).resolves.toBeUndefined();
  });

  it('starts after its checkpoint, so a restart folds only what it had not saved', async () => {
    const log = createMemoryLog();
    await log.setCheckpoint('counter', 7);
    const { def } = counter();
    const { runner, starts } = manual(log, def);
    await runner.start();
    expect(starts).toEqual([7]);
    expect(runner.appliedSeq).toBe(7);
  });

  it('stop drops the fold in progress like a crash would and rejects pending waits', async () => {
    const log = createMemoryLog();
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const { def } = counter({ gate: () => gate });
    const { runner, subject, flush } = manual(log, def);
    await runner.start();
    subject.next(rec(1));
    await flush();
    const wait = runner.waitFor(1);
    const stopped = runner.stop();
    open();
    await stopped;
    await expect(wait).rejects.toThrow(/stopped/);
    expect(await log.kv.get('n/c-a')).toBeUndefined();
    expect(await log.getCheckpoint('counter')).toBe(0);
  });

  it('a fold that throws stops the projection and fails every wait with the error', async () => {
    const log = createMemoryLog();
    const errors: unknown[] = [];
    const def: ProjectionDefinition = {
      name: 'broken',
      accepts: () => true,
      apply: () => {
        throw new Error('bad record');
      },
    };
    const subject = new Subject<LogRecord>();
    const runner = new ProjectionRunner(log, def, { source: () => subject, onError: (e) => errors.push(e) });
    await runner.start();
    const wait = runner.waitFor(1);
    subject.next(rec(1));
    await expect(wait).rejects.toThrow('bad record');
    await expect(runner.waitFor(5)).rejects.toThrow('bad record');
    expect(errors).toHaveLength(1);
  });

  it('rebuild clears its key range and folds the whole log again to the same state', async () => {
    const log = createMemoryLog();
    for (let i = 0; i < 5; i++) await log.append(i % 2 ? 'c-a' : 'c-b', [{ type: 't', data: i }]);
    await log.kv.put('n/stale', 99);
    const { def } = counter();
    const runner = new ProjectionRunner(log, def);
    await runner.start();
    expect(await log.kv.get('n/c-a')).toBe(2);
    await log.append('c-a', [{ type: 't', data: 5 }]);
    await runner.waitFor(6);
    await runner.rebuild();
    expect(await log.kv.get('n/stale')).toBeUndefined();
    expect(await log.kv.get('n/c-a')).toBe(3);
    expect(await log.kv.get('n/c-b')).toBe(3);
    await runner.stop();
    await log.close();
  });

  it('over the real log, catch-up and live hand over with no gap and no duplicate', async () => {
    const log = createMemoryLog();
    for (let i = 0; i < 50; i++) await log.append('c-a', [{ type: 't', data: i }]);
    const seen: number[] = [];
    const def: ProjectionDefinition = { name: 'seen', accepts: () => true, apply: (rs) => void seen.push(...rs.map((r) => r.seq)) };
    const runner = new ProjectionRunner(log, def);
    const started = runner.start();
    const appends = Array.from({ length: 50 }, (_, i) => log.append('c-b', [{ type: 't', data: i }]));
    await Promise.all([started, ...appends]);
    await runner.waitFor(100);
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    await runner.stop();
    await log.close();
  });
});
