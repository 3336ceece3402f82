/**
 * Caps V8's young generation under load. V8 starts it at two 1 MiB semi-spaces and doubles them
 * while the allocation rate stays high, up to 16 MiB each: a server under steady load keeps 32 MiB
 * committed (and resident, the two semi-spaces are used in turn) for objects that mostly die young,
 * and gives them back only once its allocation rate has been low for a while. `--max-semi-space-size`
 * would bound it but only as a start-up flag (read when the heap is set up; setting it later changes
 * nothing, and a re-exec to pass it costs a second Node start). V8 reads `--semi-space-growth-factor`
 * each time it grows the young generation, though: after every collection this sets it to 1 (no
 * growth) once the young generation has reached `capBytes`, and back to V8's 2 when it is below (V8
 * shrinks it itself when the allocation rate drops, and it must be able to grow again).
 *
 * It has to start before the young generation has grown: V8 gives memory back from it only after a
 * while of low allocation, which a server under load never has. Start-up alone (loading the modules,
 * compiling a TypeScript config) took it to 16–32 MiB, so the CLI starts the cap as its first
 * statement (src/cli/index.ts), and the server's start (src/runtime/idle-collection.ts) for an
 * embedding process.
 */
import v8 from 'node:v8';
import { PerformanceObserver } from 'node:perf_hooks';

export interface YoungGenerationCapOptions {
  /** committed bytes of the young generation (both semi-spaces) past which it stops growing (default 8 MiB; 0 leaves V8's own 32 MiB) */
  capBytes?: number;
  /** sets a V8 flag (default `v8.setFlagsFromString`) */
  setV8Flag?: (flag: string) => void;
  /** committed bytes of the young generation now (default from `v8.getHeapSpaceStatistics()`) */
  youngBytes?: () => number;
  /** calls `onCollection` after every garbage collection; returns the unsubscribe (default a `gc` PerformanceObserver) */
  observeCollections?: (onCollection: () => void) => () => void;
  /** the node flags the process was started with (default `process.execArgv` and `NODE_OPTIONS`) */
  nodeFlags?: string[];
}

export const DEFAULT_YOUNG_GENERATION_CAP_BYTES = 8 * 1024 * 1024;
/** V8's own growth factor (its flag's default) */
const V8_GROWTH_FACTOR = 2;

function newSpaceBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

function gcObserver(onCollection: () => void): () => void {
  const observer = new PerformanceObserver(onCollection);
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}

/** whether a cap watches this process's own collections: one is enough (the CLI starts it first thing, the server again) */
let watching = false;

/**
 * Starts capping (see the module comment); `stop` restores V8's growth factor. A no-op when the
 * operator sized the young generation, or when a cap already watches the process's collections.
 */
export function capYoungGeneration(opts: YoungGenerationCapOptions = {}): { stop(): void } {
  const cap = opts.capBytes ?? DEFAULT_YOUNG_GENERATION_CAP_BYTES;
  const flags = opts.nodeFlags ?? [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (cap <= 0 || flags.some((f) => /^--(max|min)[-_]semi[-_]space[-_]size|^--semi[-_]space[-_]growth[-_]factor/.test(f))) return { stop() {} };
  const own = opts.observeCollections === undefined;
  if (own && watching) return { stop() {} };
  if (own) watching = true;
  const setFlag = opts.setV8Flag ?? v8.setFlagsFromString;
  const youngBytes = opts.youngBytes ?? newSpaceBytes;
  let factor = V8_GROWTH_FACTOR;
  const check = () => {
    const wanted = youngBytes() >= cap ? 1 : V8_GROWTH_FACTOR;
    if (wanted === factor) return;
    factor = wanted;
    setFlag(`--semi-space-growth-factor=${wanted}`);
  };
  check();
  const unsubscribe = (opts.observeCollections ?? gcObserver)(check);
  return {
    stop() {
      if (own) watching = false;
      unsubscribe();
      if (factor !== V8_GROWTH_FACTOR) setFlag(`--semi-space-growth-factor=${V8_GROWTH_FACTOR}`);
      factor = V8_GROWTH_FACTOR;
    },
  };
}
