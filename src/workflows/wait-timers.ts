/**
 * The engine's timers of durable waits: one min-heap of due times per engine and one clock timer
 * for the earliest, so 100k sleeping executions cost 100k heap entries, not 100k timers. Keys name
 * a wait (execution and wait id); arming a key again replaces its entry, disarming drops it (lazily:
 * a replaced or disarmed entry stays in the heap until it reaches the top). Time is the engine's
 * injectable clock, so tests drive it by hand.
 */
import type { Clock, Timer } from '../kernel/clock.js';

interface Entry {
  at: number;
  key: string;
  fire: () => void;
  /** tie-break: armed earlier fires first */
  n: number;
}

/** setTimeout's bound: a longer wait is armed in steps and checked again when it ends. */
const MAX_DELAY = 2 ** 31 - 1;

export class WaitTimers {
  private readonly heap: Entry[] = [];
  private readonly live = new Map<string, Entry>();
  private timer: Timer | undefined;
  private timerAt = Infinity;
  private n = 0;
  private stopped = false;

  constructor(private readonly clock: Clock) {}

  /** Calls `fire` once at `at` (at once, on the next turn, when it is past); replaces the key's earlier arming. */
  arm(key: string, at: number, fire: () => void): void {
    if (this.stopped) return;
    const entry: Entry = { at, key, fire, n: this.n++ };
    this.live.set(key, entry);
    this.push(entry);
    this.schedule();
  }

  disarm(key: string): void {
    this.live.delete(key);
  }

  /** Whether a timer is armed under `key` (not fired, not disarmed). */
  isArmed(key: string): boolean {
    return this.live.has(key);
  }

  /** Timers armed and not fired or disarmed. */
  get size(): number {
    return this.live.size;
  }

  /** Drops every timer (the engine stops: the records re-arm them at the next start). */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.live.clear();
    this.heap.length = 0;
  }

  private schedule(): void {
    this.dropStale();
    const top = this.heap[0];
    if (!top) {
      this.timer?.cancel();
      this.timer = undefined;
      this.timerAt = Infinity;
      return;
    }
    if (this.timer && this.timerAt <= top.at) return;
    this.timer?.cancel();
    this.timerAt = top.at;
    const delay = Math.min(MAX_DELAY, Math.max(0, top.at - this.clock.now()));
    this.timer = this.clock.setTimer(() => this.tick(), delay, { unref: true });
  }

  private tick(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    const due: Entry[] = [];
    for (;;) {
      this.dropStale();
      const top = this.heap[0];
      if (!top || top.at > now) break;
      this.pop();
      this.live.delete(top.key);
      due.push(top);
    }
    this.schedule();
    for (const e of due) e.fire();
  }

  /** Pops replaced and disarmed entries off the top. */
  private dropStale(): void {
    while (this.heap.length > 0 && this.live.get(this.heap[0].key) !== this.heap[0]) this.pop();
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.n < b.n);
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(e, h[p])) break;
      h[i] = h[p];
      i = p;
    }
    h[i] = e;
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = l < h.length && this.less(h[l], last) ? l : -1;
      if (r < h.length && this.less(h[r], m === -1 ? last : h[m])) m = r;
      if (m === -1) break;
      h[i] = h[m];
      i = m;
    }
    h[i] = last;
  }
}
