/**
 * The soak's verdict (bench/lib/soak-analysis.ts): steady growth over the second half fails, a level
 * series with noise passes, warm-up growth in the first half is not held against the server.
 */
import { describe, expect, it } from 'vitest';
import { analyseSoak, regression, type SoakSample } from '../../bench/lib/soak-analysis.js';

const MiB = 1024 * 1024;
const limits = { rssSlopeMbPerMin: 2, heapSlopeMbPerMin: 1, handleSlopePerMin: 2, handleGrowth: 64 };

/** 10 minutes of samples every 5 s, plus the quiet sample; `over` shapes each field by time. */
function samples(over: Partial<Record<keyof SoakSample, (t: number, i: number) => number>> = {}): SoakSample[] {
  return Array.from({ length: 122 }, (_, i) => {
    const t = i * 5;
    const base: SoakSample = {
      t, rssBytes: 250 * MiB, heapAfterGcBytes: 70 * MiB, heapTotalBytes: 90 * MiB, externalBytes: 6 * MiB, arrayBuffersBytes: 1 * MiB,
      activeHandles: 2, activeRequests: 0, loopDelayP50Ms: 1, loopDelayP99Ms: 10, loopDelayMaxMs: 20,
      fds: 48, pingMs: 2, requests: i * 1000, failures: 0, wsMessages: 0, wsChurned: 0, executions: i * 300, spans: 2000, logRecords: 1000, storageMemoryBytes: 8 * MiB, tableFiles: 10,
    };
    for (const [k, f] of Object.entries(over)) (base as unknown as Record<string, number>)[k] = f!(t, i);
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
