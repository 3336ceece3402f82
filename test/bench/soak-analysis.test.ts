/**
 * The soak's verdict (bench/lib/soak-analysis.ts): steady growth over the second half fails, a level
 * series with noise passes, warm-up growth in the first half is not held against the server.
 */
import { describe, expect, it } from 'vitest';
import { analyseSoak, judgeMemoryGoals, regression, rssByMinute, type SoakSample } from '../../bench/lib/soak-analysis.js';

const MiB = 1024 * 1024;
const limits = { rssSlopeMbPerMin: 2, heapSlopeMbPerMin: 1, handleSlopePerMin: 2, handleGrowth: 64 };

/** 10 minutes of samples every 5 s, plus the quiet sample; `over` shapes each field by time. */
function samples(over: Partial<Record<keyof SoakSample, (t: number, i: number) => number>> = {}): SoakSample[] {
  return Array.from({ length: 122 }, (_, i) => {
    const t = i * 5;
    const base: SoakSample = {
      t,
      rssBytes: 250 * MiB,
      heapAfterGcBytes: 70 * MiB,
      heapTotalBytes: 90 * MiB,
      externalBytes: 6 * MiB,
      arrayBuffersBytes: 1 * MiB,
      activeHandles: 2,
      activeRequests: 0,
      loopDelayP50Ms: 1,
      loopDelayP99Ms: 10,
      loopDelayMaxMs: 20,
      fds: 48,
      pingMs: 2,
      requests: i * 1000,
      failures: 0,
      wsMessages: 0,
      wsChurned: 0,
      executions: i * 300,
      spans: 2000,
      logRecords: 1000,
      storageMemoryBytes: 8 * MiB,
      tableFiles: 10,
    };
    for (const [k, f] of Object.entries(over)) (base as unknown as Record<string, number>)[k] = f(t, i);
    return base;
  });
}

// deterministic noise in [-1, 1]
const noise = (i: number) => Math.sin(i * 12.9898) * 0.999;

describe('the soak verdict', () => {
  it('fits a straight line exactly and reports no trend for a constant', () => {
    expect(regression([0, 1, 2, 3], [1, 3, 5, 7])).toEqual({ slope: 2, r2: 1 });
    expect(regression([0, 1, 2, 3], [4, 4, 4, 4])).toEqual({ slope: 0, r2: 0 });
  });

  it('passes a level run with noise and warm-up growth in the first half', () => {
    const run = samples({
      rssBytes: (t, i) => (Math.min(t, 120) + 140 + 8 * noise(i)) * MiB,
      heapAfterGcBytes: (t, i) => (Math.min(t, 120) / 4 + 40 + noise(i)) * MiB,
      fds: (_, i) => 48 + Math.round(2 * noise(i)),
    });
    const { reasons, analysis } = analyseSoak(run, limits);
    expect(reasons).toEqual([]);
    expect(Math.abs(analysis.rssMiB.secondHalf.slopePerMin)).toBeLessThan(2);
  });

  it('fails steady RSS growth, heap growth, and descriptors and handles that leak', () => {
    const run = samples({
      rssBytes: (t) => (200 + t / 10) * MiB, // 6 MiB per minute
      heapAfterGcBytes: (t) => (60 + t / 30) * MiB, // 2 MiB per minute
      fds: (t) => 48 + Math.floor(t / 6),
      activeHandles: (t) => 2 + Math.floor(t / 6),
    });
    const { reasons } = analyseSoak(run, limits);
    expect(reasons.join('\n')).toMatch(/RSS grows steadily over the second half: 6 MiB\/min/);
    expect(reasons.join('\n')).toMatch(/heap after a full collection grows steadily over the second half: 2 MiB\/min/);
    expect(reasons.join('\n')).toMatch(/open descriptors grow over the second half/);
    expect(reasons.join('\n')).toMatch(/active handles after the load \d+, at the start 2/);
  });

  it('reports RSS without judging it when heap snapshots were taken', () => {
    const run = samples({ rssBytes: (t) => (200 + t) * MiB });
    expect(analyseSoak(run, limits).reasons).toHaveLength(1);
    expect(analyseSoak(run, limits, { judgeRss: false }).reasons).toEqual([]);
  });
});

/** A 30-minute run sampled every 10 s (RSS in MiB by time), the heap collected once a minute, and 60 s of quiet after it. */
function run30(rssMiB: (t: number) => number, quietMiB: (t: number) => number) {
  const sample = (t: number, rss: number): SoakSample => ({ ...samples()[0], t, rssBytes: rss * MiB, collected: t % 60 === 0 });
  const loaded = Array.from({ length: 180 }, (_, i) => sample(i * 10, rssMiB(i * 10)));
  const quiet = Array.from({ length: 12 }, (_, i) => sample(1800 + (i + 1) * 5, quietMiB((i + 1) * 5)));
  return { loaded, quiet };
}

describe('the memory goals of the default-config soak', () => {
  const idle = 75 * MiB;

  it("gives the RSS curve per minute: mean and highest sample, and the heap of the minute's forced collection", () => {
    const { loaded } = run30(
      (t) => 100 + Math.floor(t / 60),
      () => 80,
    );
    const minutes = rssByMinute(loaded);
    expect(minutes).toHaveLength(30);
    expect(minutes[0]).toEqual({ minute: 1, rssMeanMiB: 100, rssMaxMiB: 100, heapAfterGcMiB: 70 });
    expect(minutes[29].rssMeanMiB).toBe(129);
    // the sample taken as the load ends, just past 30:00, is part of minute 30, not a minute of its own
    const ending = rssByMinute([...loaded, { ...loaded.at(-1)!, t: 1800.6, rssBytes: 135 * MiB }]);
    expect(ending).toHaveLength(30);
    expect(ending[29].rssMaxMiB).toBe(135);
  });

  it('passes a run that levels off under the ceiling and gives its memory back after the load', () => {
    const { loaded, quiet } = run30(
      (t) => Math.min(200, 120 + t / 6) + (t % 20 === 0 ? 4 : -4),
      (t) => (t < 20 ? 150 : 98),
    );
    const { reasons, memoryGoals } = judgeMemoryGoals(idle, loaded, quiet);
    expect(reasons).toEqual([]);
    expect(memoryGoals.plateau.middleMinutes).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(memoryGoals.plateau.lastMinutes).toEqual([21, 22, 23, 24, 25, 26, 27, 28, 29, 30]);
  });

  it('fails RSS still rising in the last ten minutes, RSS over 250 MB, and RSS that stays up after the load', () => {
    // +5 MiB a minute: minutes 21–30 end 40 % above minutes 11–20, at 254 MiB (266 MB)
    const { loaded, quiet } = run30(
      (t) => 105 + (t / 60) * 5,
      () => 121,
    );
    const { reasons } = judgeMemoryGoals(idle, loaded, quiet);
    expect(reasons.join('\n')).toMatch(/RSS does not plateau: the last 10 minutes reach [\d.]+ MiB \(per-minute mean\), over 10 % above minutes 11–20/);
    expect(reasons.join('\n')).toMatch(/RSS reached [\d.]+ MiB, over the 250 MB ceiling/);
    expect(reasons.join('\n')).toMatch(/RSS after the load 121 MiB, more than 30 MB above the idle server's 75 MiB/);
  });

  it('judges the heap trend on the samples taken after a forced collection only', () => {
    // read without a collection the heap grows with garbage; after each collection it is level
    const run = samples({ heapAfterGcBytes: (t) => (t % 60 === 0 ? 60 : 60 + t / 10) * MiB }).map((s) => ({ ...s, collected: s.t % 60 === 0 }));
    const { reasons, analysis } = analyseSoak(run, limits);
    expect(reasons).toEqual([]);
    expect(analysis.heapAfterGcMiB).toEqual({ start: 60, end: 60, secondHalf: { slopePerMin: 0, r2: 0 } });
  });
});
