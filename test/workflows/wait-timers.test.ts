/**
 * The engine's timer heap of durable waits on a manual clock: timers fire in due order, once, with
 * one clock timer for all of them; re-arming a key replaces it, disarming drops it, a past due time
 * fires at once, and a stop drops everything.
 */
import { expect, it } from 'vitest';
import { WaitTimers } from '../../src/workflows/wait-timers.js';
import { ManualClock } from '../helpers/manual-clock.js';

it('fires many waits in due order, each once, with one clock timer for all', () => {
  const clock = new ManualClock(0);
  const timers = new WaitTimers(clock);
  const fired: string[] = [];
  const dues = Array.from({ length: 1000 }, (_, i) => ((i * 7919) % 1000) + 1);
  dues.forEach((at, i) => timers.arm(`w${i}`, at, () => fired.push(`${at}:${i}`)));
  expect(clock.pending).toBe(1);
  expect(timers.size).toBe(1000);
  clock.advance(500);
  expect(fired).toHaveLength(500);
  clock.advance(600);
  expect(fired).toHaveLength(1000);
  const ats = fired.map((f) => Number(f.split(':')[0]));
  expect(ats).toEqual([...ats].sort((a, b) => a - b));
  expect(new Set(fired).size).toBe(1000);
  expect(timers.size).toBe(0);
  expect(clock.pending).toBe(0);
});

it('re-arming a key replaces its due time, disarming drops it, and a past due time fires at once', () => {
  const clock = new ManualClock(1_000);
  const timers = new WaitTimers(clock);
  const fired: string[] = [];
  timers.arm('a', 1_100, () => fired.push('a@1100'));
  timers.arm('a', 1_300, () => fired.push('a@1300'));
  timers.arm('b', 1_200, () => fired.push('b'));
  timers.disarm('b');
  timers.arm('past', 10, () => fired.push('past'));
  clock.advance(0);
  expect(fired).toEqual(['past']);
  clock.advance(250);
  expect(fired).toEqual(['past']);
  clock.advance(100);
  expect(fired).toEqual(['past', 'a@1300']);
});

it('stops: nothing armed fires and nothing new is armed', () => {
  const clock = new ManualClock(0);
  const timers = new WaitTimers(clock);
  const fired: string[] = [];
  timers.arm('a', 10, () => fired.push('a'));
  timers.stop();
  timers.arm('b', 20, () => fired.push('b'));
  clock.advance(100);
  expect(fired).toEqual([]);
  expect(clock.pending).toBe(0);
});
