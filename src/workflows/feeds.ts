/**
 * Per-execution fan-out of committed records: one RxJS pipeline over the log's committed records
 * for the whole engine (execution records only), and a
 * listener set per execution stream that somebody watches (SSE readers, execute calls waiting for
 * the run to settle, parents waiting for a child). Work per record is O(listeners of its stream).
 *
 * `attachSse` is the one reader of an execution's event stream (POST stream and the attach route):
 * it listens first, then replays the durable log after the cursor, then goes live, so no record
 * is lost or sent twice; frames are the shared per-record bytes of `events.ts`.
 */
import { filter, type Subscription as RxSubscription } from 'rxjs';
import { records$ } from '../log/committed.js';
import type { EventLog, LogRecord } from '../log/types.js';
import type { SseSink } from '../contract/routes.js';
import { EXECUTION_STREAM_PREFIX, SETTLING_RECORD_TYPES, TERMINAL_RECORD_TYPES, eventFrame, resultFrame } from './events.js';
import { encodeSseFrame } from '../feeds/sse-encoder.js';

type Listener = (record: LogRecord) => void;

export class ExecutionFeeds {
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
    this.subscription = records$(this.log, this.log.head())
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
    for (const [reject, stream] of [...this.pendingWaits]) {
      const err = typeof reason === 'function' ? reason(stream) : reason;
      if (err) reject(err);
    }
    this.pendingWaits.clear();
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
    const wait = new Promise<LogRecord>((resolve, reject) => {
      const abandon = (err: Error) => {
        off();
        this.pendingWaits.delete(abandon);
        reject(err);
      };
      const off = this.listen(stream, (rec) => {
        if (rec.streamSeq > afterStreamSeq && SETTLING_RECORD_TYPES.has(rec.type)) {
          off();
          this.pendingWaits.delete(abandon);
          resolve(rec);
        }
      });
      this.pendingWaits.set(abandon, stream);
    });
    // a wait nobody ends up awaiting (its command failed) must not become an unhandled rejection
    wait.catch(() => undefined);
    return wait;
  }

  /**
   * Streams an execution's events to an SSE sink from `cursor` (exclusive): the durable log first,
   * then live records; after the terminal record, its `workflow-result` frame, then the end.
   */
  async attachSse(stream: string, cursor: number, sink: SseSink): Promise<void> {
    let last = cursor;
    let live = false;
    let ended = false;
    const buffered: LogRecord[] = [];
    const finish = () => {
      if (ended) return;
      ended = true;
      off();
      sink.end();
    };
    const send = (rec: LogRecord) => {
      if (ended) return;
      if (rec.streamSeq > last) {
        last = rec.streamSeq;
        const frame = eventFrame(rec);
        if (frame.byteLength > 0 && !sink.send(frame)) return finish();
      }
      if (TERMINAL_RECORD_TYPES.has(rec.type)) {
        sink.send(resultFrame(rec));
        finish();
      }
    };
    const off = this.listen(stream, (rec) => {
      if (live) send(rec);
      else buffered.push(rec);
    });
    sink.onClose(() => {
      ended = true;
      off();
    });
    try {
      const head = await this.log.streamHead(stream);
      // from the cursor on; when the cursor is at or past the head, re-read the last record so an
      // ended run still closes with its result frame
      const from = Math.max(1, Math.min(cursor + 1, head));
      const records = head > 0 ? await this.log.readStream(stream, from) : [];
      for (const rec of records) send(rec);
      for (const rec of buffered) send(rec);
      buffered.length = 0;
      live = true;
    } catch (err) {
      // delivery itself failed (decisions.md §10.1): one error frame, then close; the reader resumes by cursor
      this.onError(err);
      if (!ended) sink.send(encodeSseFrame('error', last, { type: 'error', error: 'Failed to read the execution stream' }));
      finish();
    }
  }
}
