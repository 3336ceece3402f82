/**
 * The SSE writer on a uWS response: writes pre-encoded frames, respects backpressure (a frame that
 * does not fit waits in a queue until `onWritable`), and closes a reader whose unsent bytes exceed the
 * limit instead of buffering without bound (docs/api-reference.md "Framing, heartbeats and slow readers": 8 MiB). Idle sinks get `: ping`.
 * What a sink holds also counts against the server-wide output budget (output-budget.ts): before a
 * frame could be buffered past it, the slowest clients are cut. uWS does not say how much it keeps for
 * a response, so a sink counts each frame uWS reported it could not send in full until a later write
 * goes through whole (an upper bound: uWS may have sent part of them).
 *
 * A stream can have tens of thousands of idle readers, so a sink is kept small: no closure, queue
 * or timer of its own until it needs one (the queue and the `onWritable` hook appear under
 * backpressure only), one shared keep-alive timer for all sinks, and a corked write that allocates
 * nothing.
 */
import type { HttpResponse } from 'uWebSockets.js';
import type { SseSink } from '../contract/routes.js';
import { SSE_PING_FRAME } from '../kernel/sse-encoder.js';
import type { BufferedOutput, OutputBudget } from './output-budget.js';

export const SSE_MAX_UNSENT_BYTES = 8 * 1024 * 1024;
const PING_INTERVAL_MS = 15_000;

type CloseReason = 'ended' | 'aborted' | 'slow';
type CloseListener = (reason: CloseReason) => void;

const liveSinks = new Set<UwsSseSink>();
let pingTimer: NodeJS.Timeout | undefined;

function ensurePingTimer(): void {
  if (pingTimer) return;
  // every interval, a sink nothing was written to since the last tick gets a ping
  pingTimer = setInterval(() => {
    for (const sink of liveSinks) sink.keepAlive();
  }, PING_INTERVAL_MS);
  pingTimer.unref();
}

// `cork` takes a callback: one shared callback and its arguments in module state, so a write to
// each of 10,000 readers allocates no closure
let corkRes: HttpResponse | undefined;
let corkFrame: Uint8Array | undefined;
let corkOk = true;
const corkedWrite = () => {
  corkOk = corkRes!.write(corkFrame!);
};

/** `res.write(frame)` inside `res.cork`; false when uWS kept some of it (backpressure). */
function writeCorked(res: HttpResponse, frame: Uint8Array): boolean {
  const outerRes = corkRes;
  const outerFrame = corkFrame;
  corkRes = res;
  corkFrame = frame;
  res.cork(corkedWrite);
  const ok = corkOk;
  corkRes = outerRes;
  corkFrame = outerFrame;
  return ok;
}

export class UwsSseSink implements SseSink, BufferedOutput {
  closed = false;
  budgetBytes = 0;
  budgetProgressAt = 0;
  /** something was written since the last keep-alive tick */
  private wrote = true;
  /** frames waiting for uWS to drain; the first entry marks the bytes uWS itself holds */
  private queue: Uint8Array[] | undefined;
  private queuedBytes = 0;
  /** bytes of the frames uWS kept since its last complete write (what it holds, at most) */
  private heldBytes = 0;
  private listeners: CloseListener | CloseListener[] | undefined;
  /** aborted when the client goes or the reader is cut for being slow; made on demand */
  private abort: AbortController | undefined;
  private closeReason: CloseReason | undefined;

  constructor(
    private readonly res: HttpResponse,
    private readonly maxUnsent = SSE_MAX_UNSENT_BYTES,
    private readonly budget?: OutputBudget,
  ) {
    liveSinks.add(this);
    ensurePingTimer();
  }

  /**
   * Makes this sink the response's abort handler. The request's handler it replaces holds what the
   * request needed (headers, the edge's closures), which an open stream must not keep alive.
   */
  ownAbort(): void {
    this.res.onAborted(() => this.aborted());
  }

  /** A signal aborted when the client goes away or is cut for being too slow (not on `end()`). */
  abortSignal(): AbortSignal {
    if (!this.abort) {
      this.abort = new AbortController();
      if (this.closeReason === 'aborted' || this.closeReason === 'slow') this.abort.abort();
    }
    return this.abort.signal;
  }

  /** Called by the edge when uWS reports the client gone. */
  aborted(): void {
    this.finish('aborted');
  }

  send(frame: Uint8Array): boolean {
    if (this.closed) return false;
    this.wrote = true;
    return this.write(frame);
  }

  /** @internal the keep-alive tick: a ping when nothing was written since the last one */
  keepAlive(): void {
    if (this.wrote) this.wrote = false;
    else if (!this.closed) this.write(SSE_PING_FRAME);
  }

  private write(frame: Uint8Array): boolean {
    // the frame may end up buffered: room for it first (the slowest clients cut, maybe this one)
    const budget = this.budget;
    if (budget !== undefined && budget.bufferedBytes + frame.byteLength > budget.limitBytes && !budget.admit(this, frame.byteLength)) return false;
    if (this.queue !== undefined) return this.enqueue(frame);
    // uWS keeps what it could not send; further frames wait in our queue until it drains
    if (!writeCorked(this.res, frame)) {
      this.heldBytes = frame.byteLength;
      this.startQueue();
      this.account();
    }
    return true;
  }

  /** Tells the budget what this sink holds now. */
  private account(): void {
    this.budget?.set(this, this.heldBytes + this.queuedBytes);
  }

  private startQueue(): void {
    this.queue = [new Uint8Array(0)];
    this.res.onWritable(() => this.flushQueue());
  }

  private enqueue(frame: Uint8Array): boolean {
    this.queue!.push(frame);
    this.queuedBytes += frame.byteLength;
    if (this.queuedBytes > this.maxUnsent) {
      this.closeSlow();
      return false;
    }
    this.account();
    return true;
  }

  private flushQueue(): boolean {
    const queue = this.queue;
    if (this.closed || queue === undefined) return true;
    // the socket took bytes: this client reads (the budget cuts the ones that do not first)
    this.budget?.progressed(this);
    // the first entry is the marker for the bytes uWS itself holds; it has drained now
    queue.shift();
    while (queue.length > 0) {
      const frame = queue.shift()!;
      this.queuedBytes -= frame.byteLength;
      if (!writeCorked(this.res, frame)) {
        queue.unshift(new Uint8Array(0));
        this.heldBytes += frame.byteLength;
        this.account();
        return false;
      }
      // uWS sent it whole, and with it whatever it still held
      this.heldBytes = 0;
    }
    // drained: back to direct writes (the hook stays registered; uWS calls it only after a short write)
    this.queue = undefined;
    this.heldBytes = 0;
    this.account();
    return true;
  }

  end(): void {
    if (this.closed) return;
    if (this.queue !== undefined) {
      // let queued frames drain first, then end
      const drainThenEnd = () => {
        if (this.queue === undefined && !this.closed) {
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
    this.queue = undefined;
    this.queuedBytes = 0;
    this.heldBytes = 0;
    this.finish('slow');
    // closing drops what uWS holds: the client's last complete frame carries the id it resumes from
    this.res.close();
  }

  /** @internal the output budget cuts this reader to make room (output-budget.ts) */
  cutForBudget(): void {
    this.closeSlow();
  }

  onClose(listener: CloseListener): void {
    if (this.closed) listener('ended');
    else if (this.listeners === undefined) this.listeners = listener;
    else if (typeof this.listeners === 'function') this.listeners = [this.listeners, listener];
    else this.listeners.push(listener);
  }

  private finish(reason: CloseReason): void {
    if (this.closed) return;
    this.closed = true;
    this.closeReason = reason;
    liveSinks.delete(this);
    this.budget?.release(this);
    if (reason !== 'ended') this.abort?.abort();
    const ls = this.listeners;
    this.listeners = undefined;
    if (typeof ls === 'function') ls(reason);
    else if (ls) for (const l of ls) l(reason);
  }
}
