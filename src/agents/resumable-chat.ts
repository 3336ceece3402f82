/**
 * Resumable `/chat` streams (docs/api-reference.md "Chat streams", `options.resumableStream: true`): the chunk frames of
 * the active generation of one (agent, conversation, user) are kept in memory until the generation
 * ends, so `GET /agents/:id/chat/:conversationId/stream` can replay them from the first chunk (or
 * after `Last-Event-ID`) and then follow live until `[DONE]`. No external store. A new resumable
 * `/chat` on the same key aborts the older generation: its readers get `abort`, then `[DONE]`.
 * Finished streams are dropped (their messages are in memory), so resuming one answers 204.
 * `framesAfter` serves the same frames by long polling (`GET …/frames`): what another node of a
 * cluster relays when a client resumes there (src/cluster/cluster-routes.ts).
 */
import type { SseSink } from '../contract/routes.js';
import { SSE_DONE_FRAME } from '../kernel/sse-encoder.js';

const SUPERSEDED_REASON = 'Superseded by a newer chat request';

export class ChatBuffer {
  private readonly frames: Uint8Array[] = [];
  /** live readers, each with the number of the last frame it has (a resumed reader may be ahead of the buffer) */
  private readonly readers = new Map<SseSink, number>();
  /** long polls waiting for the next frame or the end */
  private readonly polls = new Set<() => void>();
  done = false;

  constructor(
    readonly key: string,
    readonly abort: (reason: string) => void,
    private readonly onEnd: (b: ChatBuffer) => void,
  ) {}

  /** Frame number n (1-based, the `id:` of the frame) is `frames[n - 1]`. */
  push(frame: Uint8Array): void {
    if (this.done) return;
    this.frames.push(frame);
    this.wakePolls();
    const n = this.frames.length;
    for (const [r, last] of this.readers) {
      if (n <= last) continue; // the reader said (Last-Event-ID) it has this frame already
      this.readers.set(r, n);
      if (!r.send(frame)) this.readers.delete(r);
    }
  }

  /** Sends the frames after `afterId`, then follows live (or ends at once when the stream is done). */
  attach(sink: SseSink, afterId = 0): void {
    for (let i = Math.max(0, afterId); i < this.frames.length; i++) sink.send(this.frames[i]);
    if (this.done) {
      sink.send(SSE_DONE_FRAME);
      sink.end();
      return;
    }
    this.readers.set(sink, Math.max(afterId, this.frames.length));
    sink.onClose(() => this.readers.delete(sink));
  }

  /**
   * The frames after number `afterId`; when there are none yet and the stream goes on, waits up to
   * `waitMs` (or until `signal` aborts) for the next one or the end.
   */
  async framesAfter(afterId: number, waitMs: number, signal?: AbortSignal): Promise<Uint8Array[]> {
    if (this.frames.length <= afterId && !this.done && waitMs > 0 && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.polls.delete(wake);
          signal?.removeEventListener('abort', wake);
          resolve();
        };
        const timer = setTimeout(wake, waitMs);
        this.polls.add(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    }
    return this.frames.slice(Math.max(0, afterId));
  }

  private wakePolls(): void {
    for (const wake of [...this.polls]) wake();
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    this.wakePolls();
    for (const r of this.readers.keys()) {
      r.send(SSE_DONE_FRAME);
      r.end();
    }
    this.readers.clear();
    this.onEnd(this);
  }
}

export class ResumableChats {
  private readonly active = new Map<string, ChatBuffer>();

  static key(agentId: string, conversationId: string, userId: string): string {
    return `${agentId}\u0000${conversationId}\u0000${userId}`;
  }

  /** Registers a new generation for `key`, aborting the one it replaces. */
  open(key: string, abort: (reason: string) => void): ChatBuffer {
    const previous = this.active.get(key);
    const buffer = new ChatBuffer(key, abort, (b) => {
      if (this.active.get(b.key) === b) this.active.delete(b.key);
    });
    this.active.set(key, buffer);
    previous?.abort(SUPERSEDED_REASON);
    return buffer;
  }

  get(key: string): ChatBuffer | undefined {
    return this.active.get(key);
  }

  get size(): number {
    return this.active.size;
  }
}
