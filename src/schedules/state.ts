/**
 * A schedule's shared state, kept in its `schedule:<id>` stream so it survives restarts and every
 * node on a shared store reads the same: paused or not, the last execution it started and when.
 * `foldSchedule` is the one reading of that stream.
 */
import type { LogRecord } from '../log/types.js';

export const SCHEDULE_STREAM_PREFIX = 'schedule:';
export const scheduleStream = (id: string) => `${SCHEDULE_STREAM_PREFIX}${id}`;

export const SCHEDULE_EVENTS = {
  /** a tick started its execution: `{ tickAt, executionId }` (tickAt: the scheduled time, epoch ms) */
  ticked: 'schedule.ticked',
  /** `POST /schedules/:id/trigger` started one: `{ executionId }` */
  triggered: 'schedule.triggered',
  paused: 'schedule.paused',
  resumed: 'schedule.resumed',
} as const;

export interface ScheduleState {
  paused: boolean;
  /** when the last execution was due (a tick's scheduled time, a trigger's time), epoch ms */
  lastRunAt?: number;
  lastExecutionId?: string;
  /** the latest tick that started an execution: the baseline of catch-up */
  lastTickAt?: number;
  /** the stream sequence folded so far (the next read starts after it) */
  streamSeq: number;
}

export const initialScheduleState = (): ScheduleState => ({ paused: false, streamSeq: 0 });

/** Applies one record of a schedule stream (records of other types only advance the sequence). */
export function applyScheduleRecord(s: ScheduleState, rec: Pick<LogRecord, 'type' | 'data' | 'at' | 'streamSeq'>): ScheduleState {
  const d = (rec.data ?? {}) as { tickAt?: number; executionId?: string };
  const next = { ...s, streamSeq: Math.max(s.streamSeq, rec.streamSeq) };
  switch (rec.type) {
    case SCHEDULE_EVENTS.paused:
      return { ...next, paused: true };
    case SCHEDULE_EVENTS.resumed:
      return { ...next, paused: false };
    case SCHEDULE_EVENTS.ticked: {
      const tickAt = d.tickAt ?? rec.at;
      // ticks recorded out of order (two nodes, one late) never move the baseline back
      const newer = s.lastTickAt === undefined || tickAt >= s.lastTickAt;
      return newer ? { ...next, lastTickAt: tickAt, lastRunAt: Math.max(tickAt, s.lastRunAt ?? tickAt), lastExecutionId: d.executionId } : next;
    }
    case SCHEDULE_EVENTS.triggered:
      return { ...next, lastRunAt: rec.at, lastExecutionId: d.executionId };
    default:
      return next;
  }
}

export const foldSchedule = (records: readonly LogRecord[], from: ScheduleState = initialScheduleState()): ScheduleState => records.reduce(applyScheduleRecord, from);
