/**
 * The rules of a schedule's time line, as pure functions: when the next tick falls, which missed
 * tick a start catches up, whether a tick is skipped for overlap, and the execution id a tick owns.
 * The id is what makes a tick start once cluster-wide: every node (or a restarted one) derives the
 * same id for the same tick, and the log refuses a second creation of its stream.
 */
import type { Cron } from 'croner';

/** The first tick strictly after `afterMs` (epoch ms), or undefined when the pattern has no more. */
export function nextTick(pattern: Cron, afterMs: number): number | undefined {
  return pattern.nextRun(new Date(afterMs))?.getTime();
}

/**
 * `catchUp: "latest"` at start: the most recent tick at or before `nowMs` that is later than the last
 * tick the schedule recorded. Undefined when none was missed, or when the schedule never ticked
 * (a new schedule has nothing to catch up).
 */
export function latestMissedTick(pattern: Cron, lastTickMs: number | undefined, nowMs: number): number | undefined {
  if (lastTickMs === undefined) return undefined;
  const next = nextTick(pattern, lastTickMs);
  if (next === undefined || next > nowMs) return undefined;
  // the last tick not after now: the tick before the first tick after now
  const after = nextTick(pattern, nowMs);
  const [prev] = pattern.previousRuns(1, new Date(after ?? nowMs + 1));
  const latest = prev?.getTime();
  return latest !== undefined && latest > lastTickMs && latest <= nowMs ? latest : next;
}

/** `overlap: "skip"` skips a tick while the schedule's previous execution still runs. */
export function skipsTick(overlap: 'skip' | 'allow', previousRunning: boolean): boolean {
  return overlap === 'skip' && previousRunning;
}

/** The execution a tick starts: the same on every node, so racing starts collide on one stream. */
export function tickExecutionId(scheduleId: string, tickMs: number): string {
  return `sched-${scheduleId}-${tickMs}`;
}

/** An execution started by `POST /schedules/:id/trigger`, outside the tick sequence. */
export function triggerExecutionId(scheduleId: string, nowMs: number, nonce: string): string {
  return `sched-${scheduleId}-trigger-${nowMs}-${nonce}`;
}
