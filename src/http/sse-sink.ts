/**
 * The SSE writer on a uWS response: writes pre-encoded frames, respects backpressure (a frame that
 * does not fit waits in a queue until `onWritable`), and closes a reader whose unsent bytes exceed the
 * limit instead of buffering without bound (decisions.md §10.0: 8 MiB). Idle sinks get `: ping`.
 */
import type { HttpResponse } from 'uWebSockets.js';
import type { SseSink } from '../contract/routes.js';
import { SSE_PING_FRAME } from '../feeds/sse-encoder.js';

export const SSE_MAX_UNSENT_BYTES = 8 * 1024 * 1024;
const PING_INTERVAL_MS = 15_000;

type CloseReason = 'ended' | 'aborted' | 'slow';

const liveSinks = new Set<UwsSseSink>();
let pingTimer: NodeJS.Timeout | undefined;

function ensurePingTimer(): void {
  if (pingTimer) return;
  pingTimer = setInterval(() => {
    const now = Date.now();
    for (const sink of liveSinks) if (now - sink.lastWriteAt >= PING_INTERVAL_MS) sink.send(SSE_PING_FRAME);
  }, PING_INTERVAL_MS);
  pingTimer.unref();
}

export class UwsSseSink implements SseSink {
  closed = false;
  lastWriteAt = Date.now();
  private queue: Uint8Array[] = [];
  private queuedBytes = 0;
  private listeners: Array<(reason: CloseReason) => void> = [];

  constructor(private readonly res: HttpResponse, private readonly maxUnsent = SSE_MAX_UNSENT_BYTES) {
    liveSinks.add(this);
    ensurePingTimer();
    res.onWritable(() => this.flushQueue());
  }

  /** Called by the edge when uWS reports the client gone. */
  aborted(): void {
    this.finish('aborted');
  }

  send(frame: Uint8Array): boolean {
    if (this.closed) return false;
    this.lastWriteAt = Date.now();
    if (this.queue.length > 0) return this.enqueue(frame);
    let ok = true;
    this.res.cork(() => {
      ok = this.res.write(frame);
    });
    // uWS keeps what it could not send; further frames wait in our queue until it drains
    if (!ok) this.queue.push(new Uint8Array(0));
    return true;
  }

  private enqueue(frame: Uint8Array): boolean {
    this.queue.push(frame);
    this.queuedBytes += frame.byteLength;
    if (this.queuedBytes > this.maxUnsent) {
      this.closeSlow();
      return false;
    }
    return true;
  }

  private flushQueue(): boolean {
    if (this.closed) return true;
    // the first entry is the marker for the bytes uWS itself holds; it has drained now
    this.queue.shift();
    while (this.queue.length > 0) {
      const frame = this.queue.shift()!;
      this.queuedBytes -= frame.byteLength;
      let ok = true;
      this.res.cork(() => {
        ok = this.res.write(frame);
      });
      if (!ok) {
        this.queue.unshift(new Uint8Array(0));
        return false;
      }
    }
    return true;
  }

  end(): void {
    if (this.closed) return;
    if (this.queue.length > 0) {
      // let queued frames drain first, then end
      const drainThenEnd = () => {
        if (this.queue.length === 0 && !this.closed) {
          this.res.cork(() => this.res.end());
          this.finish('ended');
        }
      };
      this.res.onWritable(() => {
        const ok = this.flushQueue();
        if (ok) queueMicrotask(drainThenEnd);
        return ok;
      });
      return;
    }
    this.res.cork(() => this.res.end());
    this.finish('ended');
  }

  private closeSlow(): void {
    if (this.closed) return;
    this.queue = [];
    this.queuedBytes = 0;
    this.finish('slow');
    this.res.close();
  }

  onClose(listener: (reason: CloseReason) => void): void {
    if (this.closed) listener('ended');
    else this.listeners.push(listener);
  }

  private finish(reason: CloseReason): void {
    if (this.closed) return;
    this.closed = true;
    liveSinks.delete(this);
    const ls = this.listeners;
    this.listeners = [];
    for (const l of ls) l(reason);
  }
}
