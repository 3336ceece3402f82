import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { capYoungGeneration, DEFAULT_YOUNG_GENERATION_CAP_BYTES } from '../../src/runtime/young-generation-cap.js';

const MiB = 1024 * 1024;

/** A young generation the test sizes by hand, and collections it announces. */
function fakeHeap(youngBytes: number) {
  const state = { young: youngBytes, flags: [] as string[], onCollection: undefined as (() => void) | undefined, unsubscribed: false };
  const collect = (young: number) => {
    state.young = young;
    state.onCollection?.();
  };
  const opts = {
    youngBytes: () => state.young,
    setV8Flag: (f: string) => state.flags.push(f),
    observeCollections: (fn: () => void) => {
      state.onCollection = fn;
      return () => (state.unsubscribed = true);
    },
    nodeFlags: [] as string[],
  };
  return { state, collect, opts };
}

describe('the young generation cap', () => {
  it('stops V8 growing the young generation once it reaches the cap, and lets it grow again after V8 shrank it', () => {
    const h = fakeHeap(2 * MiB);
    const cap = capYoungGeneration({ capBytes: 8 * MiB, ...h.opts });
    expect(h.state.flags).toEqual([]);
    h.collect(4 * MiB);
    h.collect(8 * MiB);
    expect(h.state.flags).toEqual(['--semi-space-growth-factor=1']);
    // further collections at the cap change nothing
    h.collect(8 * MiB);
    expect(h.state.flags).toHaveLength(1);
    // V8 shrank it (a low allocation rate): it may grow again, up to the cap
    h.collect(2 * MiB);
    expect(h.state.flags).toEqual(['--semi-space-growth-factor=1', '--semi-space-growth-factor=2']);
    h.collect(8 * MiB);
    cap.stop();
    expect(h.state.unsubscribed).toBe(true);
    expect(h.state.flags.at(-1)).toBe('--semi-space-growth-factor=2');
  });

  it('caps a young generation already past the cap at once, without waiting for a collection', () => {
    const h = fakeHeap(32 * MiB);
    capYoungGeneration(h.opts).stop();
    expect(h.state.flags[0]).toBe('--semi-space-growth-factor=1');
    expect(DEFAULT_YOUNG_GENERATION_CAP_BYTES).toBe(8 * MiB);
  });

  it("leaves the young generation to the operator's own node flags, and to V8 with a cap of 0", () => {
    for (const nodeFlags of [['--max-semi-space-size=16'], ['--min_semi_space_size=4'], ['--semi-space-growth-factor=3']]) {
      const h = fakeHeap(32 * MiB);
      capYoungGeneration({ ...h.opts, nodeFlags }).stop();
      expect(h.state.flags, nodeFlags[0]).toEqual([]);
      expect(h.state.onCollection, nodeFlags[0]).toBeUndefined();
    }
    const h = fakeHeap(32 * MiB);
    capYoungGeneration({ ...h.opts, capBytes: 0 }).stop();
    expect(h.state.flags).toEqual([]);
  });

  it('keeps the real young generation of a process allocating at a high rate within the cap, where V8 alone grows it past', { retry: 2, timeout: 120_000 }, () => {
    const child = path.join(import.meta.dirname, 'fixtures', 'young-generation-child.ts');
    const most = (arg: string) => Number(execFileSync(process.execPath, ['--import', 'tsx', child, arg], { encoding: 'utf8', timeout: 60_000 }).trim());
    const uncapped = most('0');
    const capped = most('default');
    console.info(`young generation committed at most: V8 alone ${(uncapped / MiB).toFixed(0)} MiB, capped ${(capped / MiB).toFixed(0)} MiB`);
    expect(uncapped).toBeGreaterThan(DEFAULT_YOUNG_GENERATION_CAP_BYTES);
    expect(capped).toBeLessThanOrEqual(DEFAULT_YOUNG_GENERATION_CAP_BYTES);
  });
});
