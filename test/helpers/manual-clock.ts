/** A clock the test moves by hand: `advance(ms)` fires the timers that fall due, in time order. */
import type { Clock, Timer } from '../../src/kernel/clock.js';

export class ManualClock implements Clock {
  private time: number;
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private nextId = 0;

  constructor(start = 1_700_000_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimer(fn: () => void, ms: number): Timer {
    const timer = { at: this.time + Math.max(0, ms), fn, id: this.nextId++ };
    this.timers.push(timer);
    return { cancel: () => (this.timers = this.timers.filter((t) => t !== timer)) };
  }

  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward, firing every timer due on the way (a timer set by a firing one included). */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.time = Math.max(this.time, due.at);
      due.fn();
    }
    this.time = end;
  }
}
