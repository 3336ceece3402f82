/**
 * A schedule's shared state, kept in the log so it survives restarts and every node on a shared
 * store reads the same: paused or not (the `schedule-control:<id>` stream, a record per pause or
 * resume), and the last execution it started and when (the `schedule:<id>` stream, a record per
 * tick or trigger). They are apart because the second grows with every tick: a node reads only its
 * tail (`RUNS_TAIL` records), while whether the schedule is paused needs the whole, short, first one.
 * `foldSchedule` is the one reading of both.
 */

/** what the fold reads of a log record */
export interface ScheduleRecord {
  type: string;
  data: unknown;
  at: number;
  streamSeq: number;
}

const SCHEDULE_STREAM_PREFIX = 'schedule:';
export const scheduleStream = (id: string) => `${SCHEDULE_STREAM_PREFIX}${id}`;
export const scheduleControlStream = (id: string) => `schedule-control:${id}`;
/** records of `schedule:<id>` a node reads when it first looks at a schedule: the latest tick is among them */
export const RUNS_TAIL = 64;

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
  /** the sequence folded so far of `schedule:<id>` (the next read starts after it) */
  runsSeq: number;
  /** the same of `schedule-control:<id>` */
  controlSeq: number;
}

export const initialScheduleState = (): ScheduleState => ({ paused: false, runsSeq: 0, controlSeq: 0 });

const isControl = (type: string) => type === SCHEDULE_EVENTS.paused || type === SCHEDULE_EVENTS.resumed;

/** Applies one record of either stream of a schedule. */
function applyScheduleRecord(s: ScheduleState, rec: ScheduleRecord): ScheduleState {
  const d = (rec.data ?? {}) as { tickAt?: number; executionId?: string };
  const next = isControl(rec.type) ? { ...s, controlSeq: Math.max(s.controlSeq, rec.streamSeq) } : { ...s, runsSeq: Math.max(s.runsSeq, rec.streamSeq) };
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

export const foldSchedule = (records: readonly ScheduleRecord[], from: ScheduleState = initialScheduleState()): ScheduleState => records.reduce(applyScheduleRecord, from);
