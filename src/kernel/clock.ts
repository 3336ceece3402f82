/**
 * Time as a dependency: what reads the time or waits (the agents' text-delta batching, the memory
 * debounce, the log linker's wait bound) takes a `Clock`, so unit tests drive it by hand instead of
 * sleeping. `systemClock` is the real one.
 */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  now(): number;
  /** Calls `fn` once after `ms`; `unref` timers do not keep the process alive. */
  setTimer(fn: () => void, ms: number, opts?: { unref?: boolean }): Timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms, opts) {
    const t = setTimeout(fn, ms);
    if (opts?.unref) t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};
