/**
 * Gives memory back after a burst. Under a burst of requests V8 grows its heap to several times the
 * live data (its growing factor follows the allocation rate) and keeps it committed once the burst
 * is over; its own memory reducer shrinks it only after 15–30 s of quiet. The idle collector looks
 * twice a second: once the heap has grown by `growthBytes` above its size after the last collection
 * and the event loop has been (nearly) idle for `idleMs`, it runs one full, compacting collection
 * (the old generation back to its live data). If the loop then stays idle for `settleMs`, one more
 * full collection gives back the young generation: V8 shrinks it only when the allocation rate of
 * the last 5 s is low, which the first collection, 1 s after the burst, is too early to see. Under
 * steady load it never runs (the loop is not idle), and after a collection it waits for new growth,
 * so a server idling with a large live heap is not collected again and again.
 *
 * Under load it bounds the heap another way: V8 lets the old generation grow to up to four times what
 * survived its last full collection before the next one (its growing factor follows the allocation
 * rate), so a server with 40 MiB of live data under steady load sat at 110 MiB of heap and 250 MiB of
 * RSS between collections. `heapGrowingPercent` (default 25) caps that factor at 1.25: V8 starts its
 * (incremental, mostly concurrent) full collection sooner, and the heap stays near its live size.
 * The young generation is capped too (`youngGenerationBytes`, src/runtime/young-generation-cap.ts).
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { performance } from 'node:perf_hooks';
import { systemClock, type Clock, type Timer } from '../kernel/clock.js';
import { capYoungGeneration } from './young-generation-cap.js';

export interface IdleCollectionOptions {
  /** how often the heap and the event loop are looked at (default 500 ms) */
  intervalMs?: number;
  /** how long the loop must have been idle before collecting (default 1,000 ms) */
  idleMs?: number;
  /** event-loop utilization (0–1) over an interval below which it counts as idle (default 0.05) */
  idleUtilization?: number;
  /** committed heap growth since the last collection that makes one worth its pause (default 32 MiB) */
  growthBytes?: number;
  /** how long the loop must stay idle after the compacting collection for the second one (default 6,000 ms) */
  settleMs?: number;
  clock?: Clock;
  /** committed bytes of the V8 heap (default `v8.getHeapStatistics().total_heap_size`) */
  committedHeap?: () => number;
  /** event-loop utilization since the previous call (default from `performance.eventLoopUtilization`) */
  utilization?: () => number;
  /** the collection (default a compacting full collection, `compactingCollection()`) */
  collect?: () => void;
  /** the second collection, after `settleMs` more of idleness (default a plain full collection) */
  collectAgain?: () => void;
  /**
   * the most the old generation may grow past what survived the last full collection before the next
   * one, in percent (default 25; 0 leaves V8's own factor, up to 300 %). Process-wide; an operator's
   * own `--heap-growing-percent` in the node flags wins.
   */
  heapGrowingPercent?: number;
  /**
   * committed bytes of the young generation past which V8 stops growing it (default 8 MiB; 0 leaves
   * V8's own, up to 32 MiB): src/runtime/young-generation-cap.ts. Process-wide; an operator's own
   * `--max-semi-space-size` or `--semi-space-growth-factor` wins.
   */
  youngGenerationBytes?: number;
  /** sets a V8 flag (default `v8.setFlagsFromString`) */
  setV8Flag?: (flag: string) => void;
  /** the node flags the process was started with (default `process.execArgv` and `NODE_OPTIONS`) */
  nodeFlags?: string[];
  /** told after each collection, with the committed heap before and after and the pause */
  onCollected?: (info: { stage: 'compact' | 'settle'; before: number; after: number; ms: number }) => void;
}

export interface IdleCollector {
  /** compacting collections run so far */
  readonly collections: number;
  /** second collections run so far */
  readonly settled: number;
  stop(): void;
}

const MiB = 1024 * 1024;

/** Event-loop utilization of each interval since the previous call. */
function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, last);
    last = now;
    return delta.utilization;
  };
}

/**
 * V8's `gc`, taken from a fresh context (the flag only installs it in contexts created afterwards), so
 * the server's own global never gets one.
 */
function exposedGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/**
 * A full collection that compacts every fragmented page, so the heap shrinks to its live data. A
 * plain `gc()` leaves most of a burst's pages committed (measured: 165 MiB of old space for 60 MiB
 * live), because it only moves objects off the emptiest pages.
 */
export function compactingCollection(): () => void {
  const gc = exposedGc();
  // an operator who asked for compaction on every full collection keeps it
  const keep = process.execArgv.includes('--compact-on-every-full-gc');
  return () => {
    v8.setFlagsFromString('--compact-on-every-full-gc');
    try {
      gc();
    } finally {
      if (!keep) v8.setFlagsFromString('--no-compact-on-every-full-gc');
    }
  };
}

const DEFAULT_HEAP_GROWING_PERCENT = 25;

/** Caps V8's heap growing factor (see the module comment) unless the operator set it. */
function capHeapGrowth(opts: IdleCollectionOptions): void {
  const percent = opts.heapGrowingPercent ?? DEFAULT_HEAP_GROWING_PERCENT;
  if (percent <= 0) return;
  const flags = opts.nodeFlags ?? [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (flags.some((f) => /^--heap[-_]growing[-_]percent/.test(f))) return;
  (opts.setV8Flag ?? v8.setFlagsFromString)(`--heap-growing-percent=${Math.round(percent)}`);
}

export function startIdleCollection(opts: IdleCollectionOptions = {}): IdleCollector {
  capHeapGrowth(opts);
  const youngCap = capYoungGeneration({ capBytes: opts.youngGenerationBytes, setV8Flag: opts.setV8Flag, nodeFlags: opts.nodeFlags });
  const intervalMs = opts.intervalMs ?? 500;
  const idleTicks = Math.max(1, Math.ceil((opts.idleMs ?? 1_000) / intervalMs));
  const idleUtilization = opts.idleUtilization ?? 0.05;
  const growth = opts.growthBytes ?? 32 * MiB;
  const settleTicks = Math.max(1, Math.ceil((opts.settleMs ?? 6_000) / intervalMs));
  const clock = opts.clock ?? systemClock;
  const committed = opts.committedHeap ?? (() => v8.getHeapStatistics().total_heap_size);
  const utilization = opts.utilization ?? loopUtilization();
  let collect = opts.collect;
  let collectAgain = opts.collectAgain;
  let baseline = committed();
  let idleFor = 0;
  let collections = 0;
  let settled = 0;
  let settleDue = false;
  const run = (stage: 'compact' | 'settle', fn: () => void, before: number) => {
    const t0 = performance.now();
    fn();
    const after = committed();
    baseline = after;
    idleFor = 0;
    opts.onCollected?.({ stage, before, after, ms: performance.now() - t0 });
  };
  let timer: Timer | undefined;
  let stopped = false;

  const tick = () => {
    idleFor = utilization() < idleUtilization ? idleFor + 1 : 0;
    const before = committed();
    // the heap shrank on its own (V8's memory reducer): grow from there
    if (before < baseline) baseline = before;
    if (idleFor >= idleTicks && before - baseline >= growth) {
      collect ??= compactingCollection();
      collections++;
      settleDue = true;
      run('compact', collect, before);
    } else if (settleDue && idleFor >= settleTicks) {
      collectAgain ??= exposedGc();
      settled++;
      settleDue = false;
      run('settle', collectAgain, before);
    }
    if (!stopped) timer = clock.setTimer(tick, intervalMs, { unref: true });
  };
  timer = clock.setTimer(tick, intervalMs, { unref: true });

  return {
    get collections() {
      return collections;
    },
    get settled() {
      return settled;
    },
    stop() {
      youngCap.stop();
      stopped = true;
      timer?.cancel();
      timer = undefined;
    },
  };
}
