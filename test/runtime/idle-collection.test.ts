import { describe, expect, it } from 'vitest';
import { startIdleCollection } from '../../src/runtime/idle-collection.js';
import { ManualClock } from '../helpers/manual-clock.js';

const MiB = 1024 * 1024;

/** A heap and an event loop the test sets by hand; collecting shrinks the heap to `live`. */
function fakeProcess() {
  const state = { committed: 100 * MiB, live: 70 * MiB, utilization: 0.9, collected: 0, settled: 0 };
  return {
    state,
    opts: {
      committedHeap: () => state.committed,
      utilization: () => state.utilization,
      collect: () => {
        state.collected++;
        state.committed = state.live + 32 * MiB;
      },
      // the second collection gives back the young generation
      collectAgain: () => {
        state.settled++;
        state.committed = state.live;
      },
    },
  };
}

describe('idle collection', () => {
  it('collects once when the loop goes idle after the heap grew, then waits for new growth', () => {
    const clock = new ManualClock();
    const p = fakeProcess();
    const idle = startIdleCollection({ clock, ...p.opts });
    // a burst: busy loop, the heap grows well past the threshold
    p.state.committed = 320 * MiB;
    clock.advance(5_000);
    expect(p.state.collected).toBe(0);
    // the load stops: one interval idle is not enough, a full second is
    p.state.utilization = 0.01;
    clock.advance(500);
    expect(p.state.collected).toBe(0);
    clock.advance(500);
    expect(p.state.collected).toBe(1);
    expect(p.state.committed).toBe(102 * MiB);
    // the second collection follows after 6 s more of idleness, once
    clock.advance(5_500);
    expect(p.state.settled).toBe(0);
    clock.advance(500);
    expect(p.state.settled).toBe(1);
    expect(p.state.committed).toBe(70 * MiB);
    // idle for a long time with the heap as it is: no collection again
    clock.advance(60_000);
    expect(p.state.collected).toBe(1);
    expect(p.state.settled).toBe(1);
    expect(idle.collections).toBe(1);
    expect(idle.settled).toBe(1);
    // small growth stays below the threshold; large growth and idleness collect again
    p.state.committed = 90 * MiB;
    clock.advance(10_000);
    expect(p.state.collected).toBe(1);
    p.state.committed = 150 * MiB;
    clock.advance(1_000);
    expect(p.state.collected).toBe(2);
    idle.stop();
  });

  it('never collects under steady load, however much the heap grows', () => {
    const clock = new ManualClock();
    const p = fakeProcess();
    const idle = startIdleCollection({ clock, ...p.opts });
    for (let i = 0; i < 600; i++) {
      p.state.committed += MiB;
      // a short quiet interval now and then is not an idle loop
      p.state.utilization = i % 10 === 0 ? 0.01 : 0.6;
      clock.advance(500);
    }
    expect(p.state.committed).toBe(700 * MiB);
    expect(p.state.collected).toBe(0);
    expect(p.state.settled).toBe(0);
    expect(idle.collections).toBe(0);
    idle.stop();
  });

  it('skips the second collection while load is back, and runs it once the loop has been idle long enough', () => {
    const clock = new ManualClock();
    const p = fakeProcess();
    const idle = startIdleCollection({ clock, ...p.opts });
    p.state.committed = 320 * MiB;
    p.state.utilization = 0.01;
    clock.advance(1_000);
    expect(p.state.collected).toBe(1);
    // load comes back (below the growth that would compact again) before the 6 s are up
    clock.advance(4_000);
    p.state.utilization = 0.5;
    clock.advance(10_000);
    expect(p.state.settled).toBe(0);
    p.state.utilization = 0.01;
    clock.advance(5_500);
    expect(p.state.settled).toBe(0);
    clock.advance(500);
    expect(p.state.settled).toBe(1);
    idle.stop();
  });

  it('measures growth from where the heap shrank to on its own', () => {
    const clock = new ManualClock();
    const p = fakeProcess();
    const idle = startIdleCollection({ clock, ...p.opts, growthBytes: 32 * MiB });
    p.state.utilization = 0.01;
    // V8's own reducer took the heap from 100 to 60 MiB; 40 MiB of growth from there is enough
    p.state.committed = 60 * MiB;
    clock.advance(500);
    p.state.committed = 100 * MiB;
    clock.advance(1_000);
    expect(p.state.collected).toBe(1);
    idle.stop();
  });

  it('stops looking once stopped', () => {
    const clock = new ManualClock();
    const p = fakeProcess();
    const idle = startIdleCollection({ clock, ...p.opts });
    idle.stop();
    expect(clock.pending).toBe(0);
    p.state.committed = 500 * MiB;
    p.state.utilization = 0;
    clock.advance(10_000);
    expect(p.state.collected).toBe(0);
  });

  it('leaves no timer behind when stopped from its own report of a collection', () => {
    const clock = new ManualClock();
    const p = fakeProcess();
    const idle = startIdleCollection({ clock, ...p.opts, onCollected: () => idle.stop() });
    p.state.committed = 320 * MiB;
    p.state.utilization = 0.01;
    clock.advance(1_000);
    expect(p.state.collected).toBe(1);
    expect(clock.pending).toBe(0);
  });

  // Measured in a fresh process: in a test runner's worker the old space also holds the runner's own
  // long-lived data, whose density is not this collection's doing.
  // a busy machine can delay the collector's background work: a second measurement in a fresh process is a fair retry
  it('compacts the real heap: old space comes down to its live data', { retry: 2, timeout: 120_000 }, async () => {
    const { execFileSync } = await import('node:child_process');
    const path = await import('node:path');
    const child = path.join(import.meta.dirname, 'fixtures', 'compaction-child.ts');
    const r = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', child], { encoding: 'utf8', timeout: 60_000 }));
    expect(r.kept).toBeGreaterThan(0);
    expect(r.after, JSON.stringify(r)).toBeLessThan(r.before / 2);
    expect(r.density, JSON.stringify(r)).toBeGreaterThan(0.85);
  });
});

describe('the heap growth cap', () => {
  it("sets V8's heap growing percent once, unless the operator started node with one", () => {
    const set: string[] = [];
    startIdleCollection({ clock: new ManualClock(), setV8Flag: (f) => set.push(f), nodeFlags: [], youngGenerationBytes: 0 }).stop();
    expect(set).toEqual(['--heap-growing-percent=25']);
    startIdleCollection({ clock: new ManualClock(), setV8Flag: (f) => set.push(f), nodeFlags: ['--heap-growing-percent=80'], youngGenerationBytes: 0 }).stop();
    startIdleCollection({ clock: new ManualClock(), setV8Flag: (f) => set.push(f), nodeFlags: [], heapGrowingPercent: 0, youngGenerationBytes: 0 }).stop();
    expect(set).toHaveLength(1);
  });

  it('keeps a process under steady allocation near its live heap, where V8 alone lets it grow to several times that', async () => {
    const { execFileSync } = await import('node:child_process');
    const path = await import('node:path');
    const child = path.join(import.meta.dirname, 'fixtures', 'heap-growth-child.ts');
    const peak = (arg: string) => Number(execFileSync(process.execPath, ['--import', 'tsx', child, arg], { encoding: 'utf8', timeout: 60_000 }).trim());
    const uncapped = peak('0');
    const capped = peak('default');
    console.info(`peak committed heap: V8 alone ${(uncapped / MiB).toFixed(0)} MiB, capped ${(capped / MiB).toFixed(0)} MiB`);
    expect(capped).toBeLessThan(uncapped * 0.85);
  }, 120_000);
});
