/**
 * The soak's verdict: least-squares trends over the second half of the loaded samples (the first half holds the
 * warm-up: JIT, caches and bounded stores filling), each compared with a threshold. A trend counts only when it
 * is steady (r² ≥ 0.5): noise around a level is not growth.
 */
import type { ProcessFigures } from './soak-server.js';

export interface SoakSample extends ProcessFigures {
  /** seconds since the load started */
  t: number;
  /**
   * whether the heap figure is after a forced full collection (absent: it is). The soak forces one only
   * once a minute, so that the RSS of the other samples is what the server keeps by itself.
   */
  collected?: boolean;
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
  /** resident pages of files (code, libraries, LevelDB's mapped tables) and of the tables alone, and anonymous memory (V8's heap, malloc) */
  fileBytes?: number;
  tableFileBytes?: number;
  anonymousBytes?: number;
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

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? 0;
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

function trend(samples: SoakSample[], of: (s: SoakSample) => number, unit = 1): Trend {
  const fit = regression(
    samples.map((s) => s.t),
    samples.map((s) => of(s) / unit),
  );
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
  const heap = trend(
    half.filter((s) => s.collected !== false),
    (s) => s.heapAfterGcBytes,
    MiB,
  );
  const external = trend(half, (s) => s.externalBytes, MiB);
  const fds = trend(half, (s) => s.fds);
  const handles = trend(half, (s) => s.activeHandles);
  const fdsStart = median(first.map((s) => s.fds));
  const handlesStart = median(first.map((s) => s.activeHandles));
  const reasons: string[] = [];
  if (judgeRss && steady(rss, limits.rssSlopeMbPerMin)) reasons.push(`RSS grows steadily over the second half: ${rss.slopePerMin} MiB/min (r² ${rss.r2}) > ${limits.rssSlopeMbPerMin}`);
  if (steady(heap, limits.heapSlopeMbPerMin))
    reasons.push(`the V8 heap after a full collection grows steadily over the second half: ${heap.slopePerMin} MiB/min (r² ${heap.r2}) > ${limits.heapSlopeMbPerMin}`);
  if (steady(fds, limits.handleSlopePerMin)) reasons.push(`open descriptors grow over the second half: ${fds.slopePerMin}/min (r² ${fds.r2}) > ${limits.handleSlopePerMin}`);
  if (steady(handles, limits.handleSlopePerMin)) reasons.push(`active handles grow over the second half: ${handles.slopePerMin}/min (r² ${handles.r2}) > ${limits.handleSlopePerMin}`);
  if (last.fds - fdsStart > limits.handleGrowth) reasons.push(`open descriptors after the load ${last.fds}, at the start ${fdsStart} (+${last.fds - fdsStart} > ${limits.handleGrowth})`);
  if (last.activeHandles - handlesStart > limits.handleGrowth)
    reasons.push(`active handles after the load ${last.activeHandles}, at the start ${handlesStart} (+${last.activeHandles - handlesStart} > ${limits.handleGrowth})`);
  const collected = samples.filter((s) => s.collected !== false);
  const pings = loaded.map((s) => s.pingMs);
  const loopP99 = loaded.map((s) => s.loopDelayP99Ms);
  const analysis = {
    rssMiB: { start: round(samples[0].rssBytes / MiB, 1), max: round(Math.max(...samples.map((s) => s.rssBytes)) / MiB, 1), end: round(last.rssBytes / MiB, 1), secondHalf: rss, judged: judgeRss },
    heapAfterGcMiB: { start: round(collected[0].heapAfterGcBytes / MiB, 1), end: round(collected.at(-1)!.heapAfterGcBytes / MiB, 1), secondHalf: heap },
    storageMemoryMiB: {
      start: round(samples[0].storageMemoryBytes / MiB, 1),
      max: round(Math.max(...samples.map((s) => s.storageMemoryBytes)) / MiB, 1),
      end: round(last.storageMemoryBytes / MiB, 1),
    },
    tableFiles: { start: samples[0].tableFiles, end: last.tableFiles },
    externalMiB: { start: round(samples[0].externalBytes / MiB, 1), end: round(last.externalBytes / MiB, 1), secondHalf: external },
    fds: { start: fdsStart, max: Math.max(...samples.map((s) => s.fds)), end: last.fds, secondHalf: fds },
    activeHandles: { start: handlesStart, max: Math.max(...samples.map((s) => s.activeHandles)), end: last.activeHandles, secondHalf: handles },
    eventLoopDelayMs: { p99Median: round(median(loopP99)), p99Worst: round(Math.max(...loopP99)), max: round(Math.max(...loaded.map((s) => s.loopDelayMaxMs))) },
    pingMs: { median: round(median(pings)), p90: round(quantile(pings, 0.9)), max: round(Math.max(...pings)) },
  };
  return { analysis, reasons };
}

const MB = 1_000_000;

/** The memory goals of the default-config soak (the defaults: 250 MB, +10 %, idle + 30 MB). */
export interface MemoryGoals {
  /** RSS never above this (bytes) */
  ceilingBytes: number;
  /** the last third of the run's per-minute RSS within this factor of the middle third's mean */
  plateauFactor: number;
  /** once the load is gone, RSS back within this much of the idle server's (bytes) */
  returnBytes: number;
}

const MEMORY_GOALS: MemoryGoals = { ceilingBytes: 250 * MB, plateauFactor: 1.1, returnBytes: 30 * MB };

/** One minute of the run: the mean and the highest RSS sampled in it, and the heap after the minute's forced collection. */
export interface MinuteFigures {
  minute: number;
  rssMeanMiB: number;
  rssMaxMiB: number;
  heapAfterGcMiB?: number;
  /** means of the minute's samples: resident file pages, LevelDB's mapped tables among them, anonymous memory */
  fileMiB?: number;
  tablesMiB?: number;
  anonymousMiB?: number;
}

/** A minute's mean resident file pages, of LevelDB's tables among them, and anonymous memory (samples that have them). */
function mappedMeans(ss: SoakSample[]): Pick<MinuteFigures, 'fileMiB' | 'tablesMiB' | 'anonymousMiB'> {
  const with_ = ss.filter((s) => s.fileBytes !== undefined);
  if (with_.length === 0) return {};
  const mean = (f: (s: SoakSample) => number) => round(with_.reduce((a, s) => a + f(s), 0) / with_.length / MiB, 1);
  return { fileMiB: mean((s) => s.fileBytes!), tablesMiB: mean((s) => s.tableFileBytes ?? 0), anonymousMiB: mean((s) => s.anonymousBytes ?? 0) };
}

/** Per-minute RSS (minute 1 = the first 60 s of load) of the loaded samples. */
export function rssByMinute(loaded: SoakSample[]): MinuteFigures[] {
  const minutes = new Map<number, SoakSample[]>();
  // the sample taken as the load ends (t just past its last full minute) belongs to that last minute
  const last = Math.max(1, Math.round((loaded.at(-1)?.t ?? 0) / 60));
  for (const s of loaded) {
    const m = Math.min(Math.floor(s.t / 60) + 1, last);
    if (!minutes.has(m)) minutes.set(m, []);
    minutes.get(m)!.push(s);
  }
  return [...minutes.entries()].map(([minute, ss]) => {
    const gc = ss.filter((s) => s.collected !== false).at(-1);
    return {
      minute,
      rssMeanMiB: round(ss.reduce((a, s) => a + s.rssBytes, 0) / ss.length / MiB, 1),
      rssMaxMiB: round(Math.max(...ss.map((s) => s.rssBytes)) / MiB, 1),
      ...(gc ? { heapAfterGcMiB: round(gc.heapAfterGcBytes / MiB, 1) } : {}),
      ...mappedMeans(ss),
    };
  });
}

/**
 * Judges the memory goals. `idleBytes`: RSS of the server before the load; `loaded`: the samples under
 * load; `quiet`: the samples after it stopped (the last one is judged). Plateau: the per-minute RSS of
 * the last third of the run (for 30 minutes: minutes 21–30) each within `plateauFactor` of the mean of
 * the middle third (minutes 11–20). Ceiling: no sample above `ceilingBytes`. Return: the last quiet
 * sample within `returnBytes` of idle.
 */
export function judgeMemoryGoals(idleBytes: number, loaded: SoakSample[], quiet: SoakSample[], goals: MemoryGoals = MEMORY_GOALS) {
  const minutes = rssByMinute(loaded);
  const third = Math.floor(minutes.length / 3);
  const middle = minutes.slice(third, 2 * third);
  const lastThird = minutes.slice(2 * third);
  const middleMean = middle.length ? middle.reduce((a, m) => a + m.rssMeanMiB, 0) / middle.length : NaN;
  const lastMax = lastThird.length ? Math.max(...lastThird.map((m) => m.rssMeanMiB)) : NaN;
  const maxBytes = Math.max(...loaded.map((s) => s.rssBytes), ...quiet.map((s) => s.rssBytes));
  const end = quiet.at(-1)?.rssBytes ?? NaN;
  const reasons: string[] = [];
  const mib = (b: number) => `${round(b / MiB, 1)} MiB`;
  if (third < 1) reasons.push(`too short to judge a plateau: ${minutes.length} minutes of load (3 at least)`);
  else if (!(lastMax <= middleMean * goals.plateauFactor))
    reasons.push(
      `RSS does not plateau: the last ${lastThird.length} minutes reach ${lastMax} MiB (per-minute mean), over ${round((goals.plateauFactor - 1) * 100, 0)} % above minutes ${middle[0].minute}–${middle.at(-1)!.minute} (${round(middleMean, 1)} MiB)`,
    );
  if (maxBytes > goals.ceilingBytes) reasons.push(`RSS reached ${mib(maxBytes)}, over the ${goals.ceilingBytes / MB} MB ceiling`);
  if (!(end <= idleBytes + goals.returnBytes)) reasons.push(`RSS after the load ${mib(end)}, more than ${goals.returnBytes / MB} MB above the idle server's ${mib(idleBytes)}`);
  return {
    memoryGoals: {
      goals: { ceilingMB: goals.ceilingBytes / MB, plateauFactor: goals.plateauFactor, returnMB: goals.returnBytes / MB },
      idleMiB: round(idleBytes / MiB, 1),
      maxMiB: round(maxBytes / MiB, 1),
      plateau: { middleMinutes: middle.map((m) => m.minute), middleMeanMiB: round(middleMean, 1), lastMinutes: lastThird.map((m) => m.minute), lastMaxMiB: lastMax },
      afterLoad: quiet.map((s) => ({ t: s.t, rssMiB: round(s.rssBytes / MiB, 1) })),
      minutes,
    },
    reasons,
  };
}
