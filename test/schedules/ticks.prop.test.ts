/**
 * The rules of a schedule's time line, as properties: the next tick, the tick a start catches up,
 * the overlap rule, tick ids, and the fold of the schedule stream (pause/resume, catch-up baseline).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCron } from '../../src/schedules/config.js';
import { latestMissedTick, nextTick, skipsTick, tickExecutionId } from '../../src/schedules/ticks.js';
import { foldSchedule, RUNS_TAIL, SCHEDULE_EVENTS } from '../../src/schedules/state.js';
import type { LogRecord } from '../../src/log/types.js';

const T0 = Date.UTC(2026, 0, 1);
const YEAR = 365 * 24 * 3600_000;
const time = fc.integer({ min: T0, max: T0 + YEAR });
const everyN = fc.constantFrom(1, 2, 5, 10, 15, 30);

describe('nextTick', () => {
  it('is strictly after the given time, on a whole second, and no later than one period for an every-N-seconds cron', () => {
    fc.assert(
      fc.property(everyN, time, (n, at) => {
        const next = nextTick(parseCron(`*/${n} * * * * *`, 'UTC'), at)!;
        expect(next).toBeGreaterThan(at);
        expect(next - at).toBeLessThanOrEqual(n * 1000);
        expect(next % 1000).toBe(0);
        expect(((next / 1000) % 60) % n).toBe(0);
      }),
    );
  });

  it('reads the cron in the schedule timezone: 09:00 in Oslo is 08:00 UTC in winter and 07:00 UTC in summer', () => {
    const p = parseCron('0 9 * * *', 'Europe/Oslo');
    expect(new Date(nextTick(p, Date.UTC(2026, 0, 10))!).toISOString()).toBe('2026-01-10T08:00:00.000Z');
    expect(new Date(nextTick(p, Date.UTC(2026, 6, 10))!).toISOString()).toBe('2026-07-10T07:00:00.000Z');
  });
});

describe('latestMissedTick', () => {
  it('is the last tick in (lastTick, now], and undefined when that interval holds no tick', () => {
    fc.assert(
      fc.property(everyN, time, fc.integer({ min: 0, max: 3_600_000 }), (n, lastRaw, gap) => {
        const p = parseCron(`*/${n} * * * * *`, 'UTC');
        const last = lastRaw - (lastRaw % (n * 1000)); // a real tick
        const now = last + gap;
        const missed = latestMissedTick(p, last, now);
        if (gap < n * 1000) {
          expect(missed).toBeUndefined();
          return;
        }
        expect(missed).toBeGreaterThan(last);
        expect(missed).toBeLessThanOrEqual(now);
        // no tick after it up to now: it is the most recent one
        expect(nextTick(p, missed!)).toBeGreaterThan(now);
      }),
    );
  });

  it('catches nothing up for a schedule that never ticked', () => {
    fc.assert(
      fc.property(time, (now) => {
        expect(latestMissedTick(parseCron('* * * * *', 'UTC'), undefined, now)).toBeUndefined();
      }),
    );
  });

  it('finds the one missed daily tick after a long downtime', () => {
    const p = parseCron('30 6 * * *', 'UTC');
    expect(new Date(latestMissedTick(p, Date.UTC(2026, 2, 1, 6, 30), Date.UTC(2026, 2, 20, 12))!).toISOString()).toBe('2026-03-20T06:30:00.000Z');
  });
});

describe('overlap and tick ids', () => {
  it('skips a tick only when overlap is skip and the previous execution still runs', () => {
    expect(skipsTick('skip', true)).toBe(true);
    expect(skipsTick('skip', false)).toBe(false);
    expect(skipsTick('allow', true)).toBe(false);
    expect(skipsTick('allow', false)).toBe(false);
  });

  it('derives one execution id per schedule and tick, the same on every call, and different for any other tick', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9][a-z0-9_.-]{0,20}$/), time, time, (id, a, b) => {
        expect(tickExecutionId(id, a)).toBe(tickExecutionId(id, a));
        if (a !== b) expect(tickExecutionId(id, a)).not.toBe(tickExecutionId(id, b));
        expect(tickExecutionId(id, a)).not.toContain('/');
      }),
    );
  });
});

describe('foldSchedule', () => {
  const rec = (streamSeq: number, type: string, data: unknown = {}, at = T0): LogRecord => ({ seq: streamSeq, stream: 'schedule:s', streamSeq, type, data, at });

  it('is paused exactly when the last pause or resume was a pause', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean()), (ops) => {
        const s = foldSchedule(ops.map((p, i) => rec(i + 1, p ? SCHEDULE_EVENTS.paused : SCHEDULE_EVENTS.resumed)));
        expect(s.paused).toBe(ops.length ? ops[ops.length - 1] : false);
        expect(s.controlSeq).toBe(ops.length);
      }),
    );
  });

  it('keeps the latest tick as the catch-up baseline whatever order ticks were recorded in', () => {
    fc.assert(
      fc.property(fc.array(time, { minLength: 1 }), (ticks) => {
        const s = foldSchedule(ticks.map((t, i) => rec(i + 1, SCHEDULE_EVENTS.ticked, { tickAt: t, executionId: tickExecutionId('s', t) })));
        const latest = Math.max(...ticks);
        expect(s.lastTickAt).toBe(latest);
        expect(s.lastExecutionId).toBe(tickExecutionId('s', latest));
      }),
    );
  });

  it('folds in steps to the same state as all at once (a node reads only what the stream gained)', () => {
    const records = [
      rec(1, SCHEDULE_EVENTS.ticked, { tickAt: T0, executionId: 'a' }),
      rec(2, SCHEDULE_EVENTS.paused),
      rec(3, SCHEDULE_EVENTS.triggered, { executionId: 'b' }, T0 + 5),
      rec(4, SCHEDULE_EVENTS.resumed),
    ];
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4 }), (cut) => {
        expect(foldSchedule(records.slice(cut), foldSchedule(records.slice(0, cut)))).toEqual(foldSchedule(records));
      }),
    );
    expect(foldSchedule(records)).toMatchObject({ paused: false, lastRunAt: T0 + 5, lastExecutionId: 'b', lastTickAt: T0 });
  });

  it('reads the same last run from the tail of the runs stream as from all of it, and the same catch-up baseline whenever the tail holds a tick', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 300 }), (kinds) => {
        // ticks every 10 s in order, triggers between them
        const records = kinds.map((tick, i) =>
          tick
            ? rec(i + 1, SCHEDULE_EVENTS.ticked, { tickAt: T0 + i * 10_000, executionId: `t${i}` }, T0 + i * 10_000)
            : rec(i + 1, SCHEDULE_EVENTS.triggered, { executionId: `m${i}` }, T0 + i * 10_000 + 1),
        );
        const whole = foldSchedule(records);
        const tail = foldSchedule(records.slice(-RUNS_TAIL));
        expect({ ...tail, lastTickAt: tail.lastTickAt ?? whole.lastTickAt }).toEqual(whole);
      }),
    );
  });
});
