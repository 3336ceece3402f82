/**
 * Per-execution fan-out of committed records: one RxJS pipeline over the log's committed records
 * for the whole engine (execution records only), and a
 * listener set per execution stream that somebody watches (SSE readers, execute calls waiting for
 * the run to settle, parents waiting for a child). Work per record is O(listeners of its stream).
 *
 * `attachSse` is the one reader of an execution's event stream (POST stream and the attach route).
 * The SSE readers of one stream share one listener (`StreamReaders`): a live record is encoded once
 * (`events.ts`) and written to every caught-up reader in one loop, and a reader is a small record
 * (sink, last sequence sent), with no closure or timer of its own beyond its close hook. A reader
 * catches up by a read of the durable log that started after the stream's listener was in place;
 * readers that attach while such a read is in flight, from a cursor it covers, share it, so a
 * crowd attaching at once costs one read and one decode. Records committed while a read is in
 * flight are kept with it and replayed after its records: no record is lost or sent twice at the
 * hand-over (each reader skips what is at or below its last sequence).
 */
import { filter, type Subscription as RxSubscription } from 'rxjs';
import { records$ } from '../log/committed.js';
import type { EventLog, LogRecord } from '../log/types.js';
import type { SseSink } from '../contract/routes.js';
import { EXECUTION_STREAM_PREFIX, SETTLING_RECORD_TYPES, TERMINAL_RECORD_TYPES, eventFrame, resultFrame, resultSequence } from './events.js';
import { encodeSseFrame } from '../kernel/sse-encoder.js';

type Listener = (record: LogRecord) => void;

/** Records read at a time when a settle wait looks back over what is committed already. */
const LOOK_BACK_PAGE = 256;

export class ExecutionFanout {
  private readonly listeners = new Map<string, Set<Listener>>();
  private subscription: RxSubscription | undefined;
  /** settle waits not answered yet: how to abandon each, and the stream it waits on */
  private readonly pendingWaits = new Map<(err: Error) => void, string>();

  constructor(
    private readonly log: EventLog,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** Starts delivering records committed from now on. */
  start(): void {
    if (this.subscription) return;
    // one pipeline over the log's committed records: execution records, dispatched by stream
    // of other nodes' records, only those of the streams somebody here watches (a listener is in
    // place before the read of the stream's past that it follows, so nothing falls between the two)
    this.subscription = records$(this.log, this.log.head(), { interest: { streams: () => this.listeners.keys() } })
      .pipe(filter((rec) => rec.stream.startsWith(EXECUTION_STREAM_PREFIX)))
      .subscribe((rec) => this.deliver(rec));
  }

  /**
   * Stops the fan-out; waits still pending are rejected with `reason` (or the error it builds for the
   * stream waited on; none leaves that wait pending), and their runs stay as they are.
   */
  stop(reason: Error | ((stream: string) => Error | undefined) = new Error('Workflow feeds stopped')): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.answerWaits(typeof reason === 'function' ? reason : () => reason);
    this.pendingWaits.clear();
  }

  /** Ends the settle waits for which `reason` gives an error (the feeds keep following the log). */
  answerWaits(reason: (stream: string) => Error | undefined): void {
    for (const [reject, stream] of [...this.pendingWaits]) {
      const err = reason(stream);
      if (err) reject(err);
    }
  }

  /** The streams that settle waits (execute, resume calls) are waiting on. */
  waitedStreams(): string[] {
    return [...new Set(this.pendingWaits.values())];
  }

  private deliver(rec: LogRecord): void {
    const set = this.listeners.get(rec.stream);
    if (!set) return;
    for (const l of set) {
      try {
        l(rec);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  /** Calls `listener` with every record of `stream` committed from now on; returns the unsubscribe. */
  listen(stream: string, listener: Listener): () => void {
    let set = this.listeners.get(stream);
    if (!set) this.listeners.set(stream, (set = new Set()));
    set.add(listener);
    return () => {
      const s = this.listeners.get(stream);
      if (!s) return;
      s.delete(listener);
      if (s.size === 0) this.listeners.delete(stream);
    };
  }

  /** Number of streams with listeners (tests, diagnostics). */
  get watchedStreams(): number {
    return this.listeners.size;
  }

  /**
   * Resolves with the first settling record (suspended, completed, failed, cancelled) of `stream`
   * with a stream sequence above `afterStreamSeq`. Register before the record can be committed.
   */
  waitForSettle(stream: string, afterStreamSeq: number): Promise<LogRecord> {
    return this.settleWait(stream, afterStreamSeq, false);
  }

  /**
   * The first settling record of `stream`, committed already or still to come: what the first call of
   * a start answered or will answer (an idempotent repeat answers the same).
   */
  firstSettle(stream: string): Promise<LogRecord> {
    return this.settleWait(stream, 0, true);
  }

  private settleWait(stream: string, afterStreamSeq: number, lookBack: boolean): Promise<LogRecord> {
    const wait = new Promise<LogRecord>((resolve, reject) => {
      let answered = false;
      const answer = (rec: LogRecord) => {
        if (answered) return;
        answered = true;
        off();
        this.pendingWaits.delete(abandon);
        resolve(rec);
      };
      const abandon = (err: Error) => {
        if (answered) return;
        answered = true;
        off();
        this.pendingWaits.delete(abandon);
        reject(err);
      };
      const off = this.listen(stream, (rec) => {
        if (rec.streamSeq > afterStreamSeq && SETTLING_RECORD_TYPES.has(rec.type)) answer(rec);
      });
      this.pendingWaits.set(abandon, stream);
      // the listener is in place before the read, so a settling record is either read or delivered
      if (lookBack) {
        // read in pages from the cursor: a settling record comes early in most streams, and a long one is not held whole
        const scan = async (from: number): Promise<void> => {
          const page = await this.log.readStream(stream, from, from + LOOK_BACK_PAGE - 1);
          const settled = page.find((r) => SETTLING_RECORD_TYPES.has(r.type));
          if (settled) answer(settled);
          else if (page.length === LOOK_BACK_PAGE && !answered) await scan(from + LOOK_BACK_PAGE);
        };
        scan(afterStreamSeq + 1).catch(abandon);
      }
    });
    // a wait nobody ends up awaiting (its command failed) must not become an unhandled rejection
    wait.catch(() => undefined);
    return wait;
  }

  /** SSE readers per execution stream being watched (`StreamReaders`). */
  private readonly sseReaders = new Map<string, StreamReaders>();

  /**
   * Streams an execution's events to an SSE sink from `cursor` (exclusive): the durable log first,
   * then live records; after the terminal record, its `workflow-result` frame, then the end.
   * Resolves once the reader is live (or ended); returns nothing when it is at once (caught up from
   * the records in memory), so the request that attached it ends in the same turn.
   */
  attachSse(stream: string, cursor: number, sink: SseSink): Promise<void> | void {
    let readers = this.sseReaders.get(stream);
    if (!readers) {
      readers = new StreamReaders(this, stream);
      this.sseReaders.set(stream, readers);
    }
    return readers.attach(sink, cursor);
  }

  /**
   * The record of `stream` at `streamSeq` when the stream's SSE readers hold it in memory (a crowd
   * attaching to one execution checks its first record without a read each).
   */
  cachedRecord(stream: string, streamSeq: number): LogRecord | undefined {
    return this.sseReaders.get(stream)?.recordAt(streamSeq);
  }

  /** reads of a stream's first record in flight, shared by the callers that come meanwhile */
  private readonly firstReads = new Map<string, Promise<LogRecord | undefined>>();

  /**
   * The first record of `stream`: from memory when its SSE readers hold it, else from the log, one
   * read shared by concurrent callers (a crowd attaching at once checks its execution once). A
   * shared read that found nothing is not trusted by the callers that joined it (the stream may have
   * started since it was issued): they read again.
   */
  firstRecord(stream: string): LogRecord | undefined | Promise<LogRecord | undefined> {
    const cached = this.cachedRecord(stream, 1);
    if (cached) return cached;
    const shared = this.firstReads.get(stream);
    if (shared) return shared.then((rec) => rec ?? this.readFirst(stream));
    const read = this.readFirst(stream);
    this.firstReads.set(stream, read);
    const forget = () => {
      if (this.firstReads.get(stream) === read) this.firstReads.delete(stream);
    };
    read.then(forget, forget);
    return read;
  }

  private async readFirst(stream: string): Promise<LogRecord | undefined> {
    return (await this.log.readStream(stream, 1, 1))[0];
  }

  /** SSE readers attached to `stream` (live or catching up; tests, diagnostics). */
  sseReaderCount(stream: string): number {
    return this.sseReaders.get(stream)?.size ?? 0;
  }

  /** @internal the stream's readers are all gone */
  dropReaders(stream: string, readers: StreamReaders): void {
    if (this.sseReaders.get(stream) === readers) this.sseReaders.delete(stream);
  }

  /** @internal */
  reportError(err: unknown): void {
    this.onError(err);
  }

  /** @internal */
  get eventLog(): EventLog {
    return this.log;
  }
}

/** One SSE reader: its sink and the stream sequence of the last record it was sent (or skipped). */
interface SseReader {
  readonly sink: SseSink;
  last: number;
  done: boolean;
}

/** A catch-up read of the durable log and the readers waiting on it. */
interface CatchUp {
  /** the lowest cursor it serves: readers with a cursor at or above it can share it */
  readonly after: number;
  readonly readers: SseReader[];
  /** live records committed since the read started, replayed after its records */
  readonly live: LogRecord[];
  readonly done: Promise<void>;
}

/** The most recent records a stream's readers keep in memory for readers that attach later. */
const HISTORY_MAX_RECORDS = 256;
const HISTORY_MAX_BYTES = 256 * 1024;

/**
 * The SSE readers of one execution stream: one feed listener for all of them (registered before any
 * catch-up read starts), the readers that are live, and the catch-up reads in flight.
 *
 * Once a read has completed, the stream's latest records are known without a gap up to its head
 * (the read's records, then every record the listener received since). While the stream has two
 * readers or more, up to 256 of them (256 KiB of frames) are kept, and a reader attaching from a
 * cursor they cover is caught up from memory, with no read at all; a single reader keeps none.
 */
class StreamReaders {
  private readonly live = new Set<SseReader>();
  private readonly reads: CatchUp[] = [];
  private readonly off: () => void;
  /** consecutive records up to the stream's head (the last record committed), or undefined */
  private history: LogRecord[] | undefined;
  private historyBytes = 0;

  constructor(
    private readonly fanout: ExecutionFanout,
    private readonly stream: string,
  ) {
    this.off = fanout.listen(stream, (rec) => this.onRecord(rec));
  }

  get size(): number {
    let n = this.live.size;
    for (const read of this.reads) for (const reader of read.readers) if (!reader.done) n++;
    return n;
  }

  attach(sink: SseSink, cursor: number): Promise<void> | undefined {
    const reader: SseReader = { sink, last: cursor, done: false };
    sink.onClose(() => this.drop(reader));
    if (reader.done) {
      // the sink was closed already
      this.dropIfEmpty();
      return undefined;
    }
    const history = this.history;
    if (history !== undefined && (history.length === 0 || cursor >= history[0].streamSeq - 1)) {
      // from the cursor on; at or past the head, the last record again (an ended run closes, with its result
      // frame unless the cursor is that frame's id or past it)
      const first = history.length === 0 ? 0 : Math.max(0, Math.min(cursor + 1 - history[0].streamSeq, history.length - 1));
      for (let i = first; i < history.length && !reader.done; i++) this.sendTo(reader, history[i]);
      if (!reader.done) this.live.add(reader);
      return undefined;
    }
    for (const read of this.reads)
      if (read.after <= cursor) {
        read.readers.push(reader);
        return read.done;
      }
    const read: CatchUp = { after: cursor, readers: [reader], live: [], done: undefined! };
    (read as { done: Promise<void> }).done = this.catchUp(read);
    this.reads.push(read);
    return read.done;
  }

  private async catchUp(read: CatchUp): Promise<void> {
    const log = this.fanout.eventLog;
    let records: LogRecord[];
    try {
      const head = await log.streamHead(this.stream);
      // from the lowest cursor on; when the cursor is at or past the head, re-read the last record so an
      // ended run still closes (sending its result frame only to a cursor below that frame's id)
      const from = Math.max(1, Math.min(read.after + 1, head));
      records = head > 0 ? await log.readStream(this.stream, from) : [];
    } catch (err) {
      // delivery itself failed (docs/api-reference.md "Workflow events"): one error frame, then close; the reader resumes by cursor
      this.reads.splice(this.reads.indexOf(read), 1);
      this.fanout.reportError(err);
      for (const reader of read.readers) {
        if (reader.done) continue;
        reader.sink.send(encodeSseFrame('error', reader.last, { type: 'error', error: 'Failed to read the execution stream' }));
        this.finish(reader);
      }
      this.dropIfEmpty();
      return;
    }
    // synchronous from here to the hand-over: no record can commit in between
    this.reads.splice(this.reads.indexOf(read), 1);
    for (const reader of read.readers) {
      for (let i = 0; i < records.length && !reader.done; i++) this.sendTo(reader, records[i]);
      for (let i = 0; i < read.live.length && !reader.done; i++) this.sendTo(reader, read.live[i]);
      if (!reader.done) this.live.add(reader);
    }
    // a crowd (two readers or more) keeps the stream's latest records for the readers still to come
    if (this.live.size >= 2) this.keepHistory(records, read.live);
    this.dropIfEmpty();
  }

  /**
   * A committed record of the stream: kept for the reads in flight and the history at once, written to the
   * live readers with the rest of its commit. The log delivers a commit's records in one synchronous run,
   * so they are collected until that run ends and then go out in one pass over the readers (each reader
   * gets all of them before the next one gets any): with thousands of readers, the last record of a
   * command does not wait for a full pass per earlier record.
   */
  private onRecord(rec: LogRecord): void {
    for (const read of this.reads) read.live.push(rec);
    const history = this.history;
    if (history !== undefined) {
      if (rec.streamSeq === (history.length === 0 ? 1 : history[history.length - 1].streamSeq + 1)) {
        history.push(rec);
        this.historyBytes += eventFrame(rec).byteLength;
        this.trimHistory(history);
      } else this.history = undefined; // not the next record: stop serving from memory
    }
    if (this.live.size === 0) return;
    if (this.unsent === undefined) {
      this.unsent = [];
      queueMicrotask(this.flush);
    }
    this.unsent.push(rec);
  }

  /** live records collected for the pass over the live readers (see `onRecord`) */
  private unsent: LogRecord[] | undefined;

  private readonly flush = (): void => {
    const batch = this.unsent;
    this.unsent = undefined;
    if (batch === undefined) return;
    // a reader that joined meanwhile (catch-up hand-over, history) has these records already: sendTo skips them
    for (const reader of this.live) for (let i = 0; i < batch.length && !reader.done; i++) this.sendTo(reader, batch[i]);
  };

  /**
   * After a read: its records, then the records committed since it started, are the stream up to
   * its head. Kept as the history when they follow each other and start before what is kept already.
   */
  private keepHistory(records: LogRecord[], live: LogRecord[]): void {
    const merged = records.slice();
    for (let i = 1; i < merged.length; i++) if (merged[i].streamSeq !== merged[i - 1].streamSeq + 1) return;
    let last = merged.length > 0 ? merged[merged.length - 1].streamSeq : 0;
    for (const rec of live) {
      if (rec.streamSeq <= last) continue;
      if (rec.streamSeq !== last + 1) return;
      merged.push(rec);
      last = rec.streamSeq;
    }
    // an empty history is an empty stream: everything from sequence 1 on is known
    const base = (h: LogRecord[]) => (h.length === 0 ? 1 : h[0].streamSeq);
    if (this.history !== undefined && base(this.history) <= base(merged)) return;
    this.history = merged;
    this.historyBytes = 0;
    for (const rec of merged) this.historyBytes += eventFrame(rec).byteLength;
    this.trimHistory(merged);
  }

  private trimHistory(history: LogRecord[]): void {
    let drop = Math.max(0, history.length - HISTORY_MAX_RECORDS);
    let bytes = this.historyBytes;
    for (let i = 0; i < drop; i++) bytes -= eventFrame(history[i]).byteLength;
    while (bytes > HISTORY_MAX_BYTES && drop < history.length - 1) bytes -= eventFrame(history[drop++]).byteLength;
    if (drop === 0) return;
    history.splice(0, drop);
    this.historyBytes = bytes;
  }

  /** The record of the stream at `streamSeq` when it is in memory. */
  recordAt(streamSeq: number): LogRecord | undefined {
    const history = this.history;
    if (history === undefined || history.length === 0) return undefined;
    return history[streamSeq - history[0].streamSeq];
  }

  private sendTo(reader: SseReader, rec: LogRecord): void {
    if (reader.done) return;
    try {
      if (rec.streamSeq > reader.last) {
        reader.last = rec.streamSeq;
        const frame = eventFrame(rec);
        if (frame.byteLength > 0 && !reader.sink.send(frame)) return this.finish(reader);
      }
      if (TERMINAL_RECORD_TYPES.has(rec.type)) {
        // events with a sequence above the cursor only: a reader attached from the result's own id has it already
        if (resultSequence(rec) > reader.last) reader.sink.send(resultFrame(rec));
        this.finish(reader);
      }
    } catch (err) {
      this.fanout.reportError(err);
      this.finish(reader);
    }
  }

  private finish(reader: SseReader): void {
    if (reader.done) return;
    this.drop(reader);
    reader.sink.end();
  }

  private drop(reader: SseReader): void {
    reader.done = true;
    if (!this.live.delete(reader)) return;
    if (this.live.size < 2 && this.reads.length === 0) this.history = undefined;
    this.dropIfEmpty();
  }

  private dropIfEmpty(): void {
    if (this.live.size > 0 || this.reads.length > 0) return;
    this.off();
    this.fanout.dropReaders(this.stream, this);
  }
}
