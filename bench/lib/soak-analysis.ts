/**
 * The soak's verdict: least-squares trends over the second half of the loaded samples (the first half holds the
 * warm-up: JIT, caches and bounded stores filling), each compared with a threshold. A trend counts only when it
 * is steady (r² ≥ 0.5): noise around a level is not growth.
 */
import type { ProcessFigures } from './soak-server.js';

export interface SoakSample extends ProcessFigures {
  /** seconds since the load started */
  t: number;
  rssBytes: number;
  fds: number;
  /** median latency of three trivial GETs (what a client feels of the event loop) */
  pingMs: number;
  requests: number;
  failures: number;
  wsMessages: number;
  wsChurned: number;
  executions: number;
  spans: number;
  logRecords: number;
  /** LevelDB's estimate of its memory (memtables, block cache) and its table files, from /observability/status */
  storageMemoryBytes: number;
  tableFiles: number;
}

export interface SoakThresholds {
  rssSlopeMbPerMin: number;
  heapSlopeMbPerMin: number;
  /** open descriptors and active handles, per minute */
  handleSlopePerMin: number;
  /** open descriptors or active handles after the load above the first samples */
  handleGrowth: number;
}

export interface Trend {
  slopePerMin: number;
  r2: number;
}

const MiB = 1024 * 1024;

/** Least-squares slope (per unit of `x`) and r². */
export function regression(xs: number[], ys: number[]): { slope: number; r2: number } {
  const n = xs.length;
  if (n < 3) return { slope: 0, r2: 0 };
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  const r2 = sxx === 0 || syy === 0 ? 0 : (sxy * sxy) / (sxx * syy);
  return { slope, r2 };
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? 0;
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

function trend(samples: SoakSample[], of: (s: SoakSample) => number, unit = 1): Trend {
  const fit = regression(samples.map((s) => s.t), samples.map((s) => of(s) / unit));
  return { slopePerMin: round(fit.slope * 60, 3), r2: round(fit.r2, 3) };
}

const steady = (t: Trend, limit: number) => t.slopePerMin > limit && t.r2 >= 0.5;

/**
 * `samples`: every sample, the last one taken after a quiet period with no load. Returns the analysis for the
 * report and the reasons to fail (empty: pass). `judgeRss: false` reports RSS without judging it: a heap
 * snapshot makes V8 allocate hundreds of MiB outside its heap, which the C allocator keeps mapped afterwards.
 */
export function analyseSoak(samples: SoakSample[], limits: SoakThresholds, { judgeRss = true } = {}) {
  const loaded = samples.slice(0, -1);
  const half = loaded.slice(Math.floor(loaded.length / 2));
  const first = loaded.slice(0, Math.min(3, loaded.length));
  const last = samples[samples.length - 1];
  const rss = trend(half, (s) => s.rssBytes, MiB);
  const heap = trend(half, (s) => s.heapAfterGcBytes, MiB);
  const external = trend(half, (s) => s.externalBytes, MiB);
  const fds = trend(half, (s) => s.fds);
  const handles = trend(half, (s) => s.activeHandles);
  const fdsStart = median(first.map((s) => s.fds));
  const handlesStart = median(first.map((s) => s.activeHandles));
  const reasons: string[] = [];
  if (judgeRss && steady(rss, limits.rssSlopeMbPerMin)) reasons.push(`RSS grows steadily over the second half: ${rss.slopePerMin} MiB/min (r² ${rss.r2}) > ${limits.rssSlopeMbPerMin}`);
  if (steady(heap, limits.heapSlopeMbPerMin)) reasons.push(`the V8 heap after a full collection grows steadily over the second half: ${heap.slopePerMin} MiB/min (r² ${heap.r2}) > ${limits.heapSlopeMbPerMin}`);
  if (steady(fds, limits.handleSlopePerMin)) reasons.push(`open descriptors grow over the second half: ${fds.slopePerMin}/min (r² ${fds.r2}) > ${limits.handleSlopePerMin}`);
  if (steady(handles, limits.handleSlopePerMin)) reasons.push(`active handles grow over the second half: ${handles.slopePerMin}/min (r² ${handles.r2}) > ${limits.handleSlopePerMin}`);
  if (last.fds - fdsStart > limits.handleGrowth) reasons.push(`open descriptors after the load ${last.fds}, at the start ${fdsStart} (+${last.fds - fdsStart} > ${limits.handleGrowth})`);
  if (last.activeHandles - handlesStart > limits.handleGrowth) reasons.push(`active handles after the load ${last.activeHandles}, at the start ${handlesStart} (+${last.activeHandles - handlesStart} > ${limits.handleGrowth})`);
  const pings = loaded.map((s) => s.pingMs);
  const loopP99 = loaded.map((s) => s.loopDelayP99Ms);
  const analysis = {
    rssMiB: { start: round(samples[0].rssBytes / MiB, 1), max: round(Math.max(...samples.map((s) => s.rssBytes)) / MiB, 1), end: round(last.rssBytes / MiB, 1), secondHalf: rss, judged: judgeRss },
    heapAfterGcMiB: { start: round(samples[0].heapAfterGcBytes / MiB, 1), end: round(last.heapAfterGcBytes / MiB, 1), secondHalf: heap },
    storageMemoryMiB: { start: round(samples[0].storageMemoryBytes / MiB, 1), max: round(Math.max(...samples.map((s) => s.storageMemoryBytes)) / MiB, 1), end: round(last.storageMemoryBytes / MiB, 1) },
    tableFiles: { start: samples[0].tableFiles, end: last.tableFiles },
    externalMiB: { start: round(samples[0].externalBytes / MiB, 1), end: round(last.externalBytes / MiB, 1), secondHalf: external },
    fds: { start: fdsStart, max: Math.max(...samples.map((s) => s.fds)), end: last.fds, secondHalf: fds },
    activeHandles: { start: handlesStart, max: Math.max(...samples.map((s) => s.activeHandles)), end: last.activeHandles, secondHalf: handles },
    eventLoopDelayMs: { p99Median: round(median(loopP99)), p99Worst: round(Math.max(...loopP99)), max: round(Math.max(...loaded.map((s) => s.loopDelayMaxMs))) },
    pingMs: { median: round(median(pings)), p90: round(quantile(pings, 0.9)), max: round(Math.max(...pings)) },
  };
  return { analysis, reasons };
}
