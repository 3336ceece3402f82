/**
 * Subscriptions shared by every EventLog implementation: catch-up from storage, then live, each
 * record exactly once and in global order whatever the moment of the call.
 *
 * How the hand-over stays exact: a subscriber reads durable records (cursor, head] in chunks; after
 * each exhausted reader it compares its cursor with `head()` synchronously and, when equal, joins
 * the live set in the same turn. The log updates `head()` and calls `publish` in one synchronous
 * step after a commit, so every record is either at or below the head the subscriber caught up
 * to, or published after it went live. Each delivery also checks the record against the
 * subscriber's cursor: a record at or below it is a duplicate and skipped, and a record beyond
 * `cursor + 1` would be a gap, which is reported instead of silently delivered.
 */
import type { LogRecord, RecordInterest, SubscribeOptions, Subscription } from './types.js';

/** Reads durable records after a sequence, chunk by chunk, up to a bound fixed when it was opened. */
export interface ChunkReader {
  /** The next records in order (at most `limit`); an empty array when the reader is exhausted. */
  next(limit: number): Promise<LogRecord[]> | LogRecord[];
  close(): void;
}

export interface CatchUpSource {
  /** Last durable global sequence. */
  head(): number;
  /** A reader over records with `afterSeq < seq <= uptoSeq`. */
  openReader(afterSeq: number, uptoSeq: number): ChunkReader;
  /**
   * How many records retention has removed from storage (0 or absent: none). A catch-up skips gaps
   * in storage up to that many records; a gap beyond it is damage, reported like a live gap.
   */
  removedRecords?(): number;
}

/** The union of live subscribers' filters: what a read of other nodes' records must return (at least). */
export interface ReadFilter {
  streams: Set<string>;
  streamPrefixes: Set<string>;
  typePrefixes: Set<string>;
}

/** Whether a record of another node is one `interest` names (undefined: every record is). */
function interestTest(interest: RecordInterest): ((r: LogRecord) => boolean) | undefined {
  if (interest === 'all') return undefined;
  if (interest === 'own') return () => false;
  if (interest.all?.()) return undefined;
  const streams = interest.streams ? new Set(interest.streams()) : undefined;
  const streamPrefixes = interest.streamPrefixes ?? [];
  const typePrefixes = interest.typePrefixes ?? [];
  return (r) => streams?.has(r.stream) === true || streamPrefixes.some((p) => r.stream.startsWith(p)) || typePrefixes.some((p) => r.type.startsWith(p));
}

export type SubscriberErrorHandler = (err: unknown, record: LogRecord | undefined) => void;

/** Default report for a subscriber that threw or a catch-up read that failed: loud, not fatal. */
export const reportSubscriberError: SubscriberErrorHandler = (err, record) => {
  const where = record ? ` while handling record ${record.seq} (${record.type} on ${record.stream})` : ' during catch-up';
  process.emitWarning(`Event log subscriber stopped${where}: ${(err as Error)?.stack ?? String(err)}`, 'EventLogSubscriberError');
};

const CHUNK = 1024;

class Subscriber implements Subscription {
  cursor: number;
  closed = false;
  reader: ChunkReader | undefined;
  constructor(
    readonly hub: SubscriptionHub,
    afterSeq: number,
    readonly onRecord: (record: LogRecord) => void,
    readonly interest: RecordInterest,
    readonly passed: ((seq: number) => void) | undefined,
  ) {
    this.cursor = afterSeq;
  }
  /** Bound, so it can be passed around as a plain function. */
  readonly unsubscribe = (): void => {
    if (this.closed) return;
    this.closed = true;
    this.hub.live.delete(this);
    this.hub.all.delete(this);
    this.reader?.close();
  };
}

export class SubscriptionHub {
  /** Subscribers that are caught up and receive `publish`ed records. */
  readonly live = new Set<Subscriber>();
  readonly all = new Set<Subscriber>();
  private queue: Array<{ records: LogRecord[]; upto?: number; foreignOnly?: boolean }> = [];
  private draining = false;

  constructor(
    private readonly source: CatchUpSource,
    private readonly onError: SubscriberErrorHandler = reportSubscriberError,
  ) {}

  subscribe(afterSeq: number, onRecord: (record: LogRecord) => void, options: SubscribeOptions = {}): Subscription {
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new RangeError(`afterSeq must be a non-negative integer, got ${afterSeq}`);
    if (typeof onRecord !== 'function') throw new TypeError('subscribe needs a callback');
    const sub = new Subscriber(this, afterSeq, onRecord, options.interest ?? 'all', options.passed);
    this.all.add(sub);
    // Catch-up starts on a later turn so the callback never runs before `subscribe` returns.
    queueMicrotask(() => void this.catchUp(sub));
    return sub;
  }

  /** Delivers freshly committed records (in global order) to live subscribers. Not re-entrant:
   * records published from inside a callback are queued behind the ones being delivered. */
  publish(records: LogRecord[]): void {
    this.enqueue({ records });
  }

  /**
   * Delivers records read back from storage that are everything committed up to `upto` (a shared
   * store's other nodes' commits): the sequences they lack were removed by retention, so they are
   * gaps, not lost deliveries, and live subscribers stand at `upto` afterwards.
   */
  publishRead(records: LogRecord[], upto: number, foreignOnly = false): void {
    this.enqueue({ records, upto, foreignOnly });
  }

  /**
   * `foreignOnly`: the records are other nodes' alone (a filtered read, which never reaches this
   * node's commits: pg-delivery.ts), so each subscriber gets those its interest names, no more. A
   * read of everything may hold this node's own records too, which every subscriber must get: all go
   * to all.
   */
  private enqueue(batch: { records: LogRecord[]; upto?: number; foreignOnly?: boolean }): void {
    if (this.live.size === 0 && !this.draining) return;
    this.queue.push(batch);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let q = 0; q < this.queue.length; q++) {
        const { records: batch, upto, foreignOnly } = this.queue[q];
        const read = upto !== undefined;
        for (const sub of this.live) {
          const wants = foreignOnly ? interestTest(sub.interest) : undefined;
          for (let i = 0; i < batch.length && !sub.closed; i++) if (!wants || wants(batch[i])) this.deliver(sub, batch[i], read);
          if (read && !sub.closed && sub.cursor < upto) {
            sub.cursor = upto;
            this.passed(sub, upto);
          }
        }
      }
    } finally {
      this.queue = [];
      this.draining = false;
    }
  }

  /**
   * What the live subscribers need of other nodes' records together, asked before each read of them:
   * `all`, a filter (streams, stream prefixes, type prefixes), or undefined when they need none.
   */
  foreignInterest(): 'all' | ReadFilter | undefined {
    let filter: ReadFilter | undefined;
    for (const sub of this.live) {
      const i = sub.interest;
      if (i === 'all') return 'all';
      if (i === 'own') continue;
      if (i.all?.()) return 'all';
      filter ??= { streams: new Set(), streamPrefixes: new Set(), typePrefixes: new Set() };
      if (i.streams) for (const s of i.streams()) filter.streams.add(s);
      if (i.streamPrefixes) for (const p of i.streamPrefixes) filter.streamPrefixes.add(p);
      if (i.typePrefixes) for (const p of i.typePrefixes) filter.typePrefixes.add(p);
    }
    return filter && filter.streams.size + filter.streamPrefixes.size + filter.typePrefixes.size > 0 ? filter : undefined;
  }

  /** Stops every subscription (the log is closing). */
  closeAll(): void {
    for (const sub of this.all) sub.unsubscribe();
  }

  /** `read`: the record was read back from storage below a committed head (publishRead), where a gap is a removal */
  private deliver(sub: Subscriber, rec: LogRecord, read = false): void {
    if (rec.seq <= sub.cursor) return; // already delivered by catch-up
    if (rec.seq !== sub.cursor + 1 && !read) {
      this.fail(sub, new Error(`Subscription gap: expected seq ${sub.cursor + 1}, got ${rec.seq}`), rec);
      return;
    }
    sub.cursor = rec.seq;
    try {
      sub.onRecord(rec);
    } catch (err) {
      // A callback that threw has missed a record it cannot get again on this subscription.
      this.fail(sub, err, rec);
    }
  }

  private passed(sub: Subscriber, seq: number): void {
    if (!sub.passed) return;
    try {
      sub.passed(seq);
    } catch (err) {
      this.fail(sub, err, undefined);
    }
  }

  private fail(sub: Subscriber, err: unknown, rec: LogRecord | undefined): void {
    sub.unsubscribe();
    this.onError(err, rec);
  }

  private async catchUp(sub: Subscriber): Promise<void> {
    try {
      while (!sub.closed) {
        const head = this.source.head();
        if (sub.cursor >= head) {
          // Same synchronous turn as the head check: nothing can commit in between.
          this.live.add(sub);
          return;
        }
        const reader = this.source.openReader(sub.cursor, head);
        sub.reader = reader;
        // records removed by retention are gaps in storage, not lost deliveries: skipped, up to as many as were removed
        const removed = this.source.removedRecords?.() ?? 0;
        let skipped = 0;
        const skip = (to: number, rec: LogRecord | undefined): boolean => {
          skipped += to - sub.cursor;
          if (skipped <= removed) return true;
          this.fail(sub, new Error(`Subscription gap: expected seq ${sub.cursor + 1}, got ${rec?.seq ?? `nothing up to ${head}`}`), rec);
          return false;
        };
        try {
          for (;;) {
            const chunk = await reader.next(CHUNK);
            if (sub.closed || chunk.length === 0) break;
            for (let i = 0; i < chunk.length && !sub.closed; i++) {
              const rec = chunk[i];
              if (rec.seq > sub.cursor + 1) {
                if (!skip(rec.seq - 1, rec)) break;
                sub.cursor = rec.seq - 1;
              }
              this.deliver(sub, rec);
            }
          }
          // everything up to `head` was durable when the reader opened: what it did not return was removed
          if (!sub.closed && sub.cursor < head && skip(head, undefined)) sub.cursor = head;
        } finally {
          sub.reader = undefined;
          reader.close();
        }
      }
    } catch (err) {
      // A read failing because the log closed under us is the normal end of a subscription.
      if (!sub.closed) this.fail(sub, err, undefined);
    }
  }
}
