/**
 * The scheduler: one timer per schedule on an injected clock, firing at each cron tick. A tick
 * reads the schedule's shared state from the log first (a pause on another node counts), applies
 * the overlap rule, then starts the execution whose id the tick owns: on several nodes (or after a
 * restart) every racer derives the same id, the log accepts one creation, and only the winner
 * records the tick in `schedule:<id>`. State changes (pause, resume, trigger) are records too.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { notFound } from '../errors.js';
import type { Clock, Timer } from '../kernel/clock.js';
import type { ServerContext } from '../contract/server-module.js';
import type { ResolvedSchedule } from './config.js';
import type { ScheduleRuns } from './ports.js';
import { foldSchedule, initialScheduleState, RUNS_TAIL, scheduleControlStream, scheduleStream, SCHEDULE_EVENTS, type ScheduleState } from './state.js';
import { latestMissedTick, nextTick, skipsTick, tickExecutionId, triggerExecutionId } from './ticks.js';

/** setTimeout's ceiling is ~24.8 days; a longer wait is re-armed on the way */
const MAX_WAIT_MS = 6 * 60 * 60 * 1000;

export interface ScheduleView {
  id: string;
  workflow: string;
  cron: string;
  timezone: string;
  paused: boolean;
  nextRunAt: number | undefined;
  lastRunAt: number | undefined;
  lastExecutionId: string | undefined;
}

interface Slot {
  def: ResolvedSchedule;
  state: ScheduleState;
  timer?: Timer;
  /** the tick the timer waits for */
  due?: number;
  /** ticks, state reads and commands of one schedule run one after another */
  chain: Promise<unknown>;
}

export interface SchedulerDeps {
  log: ServerContext['log'];
  runs: ScheduleRuns;
  clock: Clock;
  logger: Logger;
}

export class Scheduler {
  private readonly slots = new Map<string, Slot>();
  private stopped = false;

  constructor(
    schedules: readonly ResolvedSchedule[],
    private readonly deps: SchedulerDeps,
  ) {
    for (const def of schedules) this.slots.set(def.id, { def, state: initialScheduleState(), chain: Promise.resolve() });
  }

  /** the configured schedule ids, in config order */
  ids(): string[] {
    return [...this.slots.keys()];
  }

  /** Reads every schedule's state, runs the catch-ups, arms the timers. */
  async start(): Promise<void> {
    const now = this.deps.clock.now();
    for (const slot of this.slots.values()) {
      await this.refresh(slot);
      const missed = slot.def.catchUp === 'latest' && !slot.state.paused ? latestMissedTick(slot.def.pattern, slot.state.lastTickAt, now) : undefined;
      if (missed !== undefined) {
        this.deps.logger.info({ schedule: slot.def.id, tickAt: new Date(missed).toISOString() }, `schedule ${slot.def.id}: catching up the tick missed while no server ran`);
        await this.serial(slot, () => this.fire(slot, missed));
      }
      this.arm(slot, now);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const slot of this.slots.values()) slot.timer?.cancel();
    await Promise.all([...this.slots.values()].map((s) => s.chain.catch(() => undefined)));
  }

  /** Every schedule as `GET /schedules` shows it (state read from the log first). */
  async list(): Promise<ScheduleView[]> {
    const out: ScheduleView[] = [];
    for (const slot of this.slots.values()) {
      await this.serial(slot, () => this.refresh(slot));
      out.push(this.view(slot));
    }
    return out;
  }

  async pause(id: string): Promise<ScheduleView> {
    return this.setPaused(this.slot(id), true);
  }

  async resume(id: string): Promise<ScheduleView> {
    return this.setPaused(this.slot(id), false);
  }

  /** Starts one execution now, outside the tick sequence (paused or not). */
  async trigger(id: string): Promise<{ executionId: string }> {
    const slot = this.slot(id);
    return this.serial(slot, async () => {
      const now = this.deps.clock.now();
      const executionId = triggerExecutionId(slot.def.id, now, randomUUID().slice(0, 8));
      await this.deps.runs.start({ workflowId: slot.def.workflow, executionId, input: slot.def.input, metadata: { scheduleId: slot.def.id, trigger: 'manual' } });
      await this.record(slot, SCHEDULE_EVENTS.triggered, { executionId });
      return { executionId };
    });
  }

  private slot(id: string): Slot {
    const slot = this.slots.get(id);
    if (!slot) throw notFound(`Schedule not found: ${id}`);
    return slot;
  }

  private view(slot: Slot): ScheduleView {
    const { def, state } = slot;
    return {
      id: def.id,
      workflow: def.workflow,
      cron: def.cron,
      timezone: def.timezone,
      paused: state.paused,
      nextRunAt: state.paused ? undefined : (slot.due ?? nextTick(def.pattern, this.deps.clock.now())),
      lastRunAt: state.lastRunAt,
      lastExecutionId: state.lastExecutionId,
    };
  }

  private setPaused(slot: Slot, paused: boolean): Promise<ScheduleView> {
    return this.serial(slot, async () => {
      await this.refresh(slot);
      if (slot.state.paused !== paused) await this.record(slot, paused ? SCHEDULE_EVENTS.paused : SCHEDULE_EVENTS.resumed, {});
      return this.view(slot);
    });
  }

  private serial<T>(slot: Slot, fn: () => Promise<T>): Promise<T> {
    const run = slot.chain.then(fn, fn);
    slot.chain = run.catch(() => undefined);
    return run;
  }

  /** Folds what the schedule's streams gained since the last read (other nodes' records included). */
  private async refresh(slot: Slot): Promise<void> {
    const { log } = this.deps;
    const id = slot.def.id;
    const runs = scheduleStream(id);
    // the first look reads the tail only: the stream holds one record per tick, without end
    const from = slot.state.runsSeq > 0 ? slot.state.runsSeq + 1 : Math.max(1, (await log.streamHead(runs)) - RUNS_TAIL + 1);
    const [control, recent] = await Promise.all([log.readStream(scheduleControlStream(id), slot.state.controlSeq + 1), log.readStream(runs, from)]);
    if (control.length || recent.length) slot.state = foldSchedule([...control, ...recent], slot.state);
  }

  private async record(slot: Slot, type: string, data: Record<string, unknown>): Promise<void> {
    const stream = type === SCHEDULE_EVENTS.paused || type === SCHEDULE_EVENTS.resumed ? scheduleControlStream(slot.def.id) : scheduleStream(slot.def.id);
    await this.deps.log.append(stream, [{ type, data, at: this.deps.clock.now() }]);
    await this.refresh(slot);
  }

  /** Waits for the first tick after `from` (the timer is re-armed after each tick, so one is pending at a time). */
  private arm(slot: Slot, from: number): void {
    if (this.stopped) return;
    const due = nextTick(slot.def.pattern, from);
    slot.due = due;
    if (due === undefined) return;
    const wait = due - this.deps.clock.now();
    slot.timer = this.deps.clock.setTimer(
      () => {
        slot.timer = undefined;
        if (this.stopped) return;
        if (wait > MAX_WAIT_MS && this.deps.clock.now() < due) return this.arm(slot, from);
        void this.serial(slot, () => this.fire(slot, due)).finally(() => this.arm(slot, Math.max(due, this.deps.clock.now())));
      },
      Math.min(Math.max(0, wait), MAX_WAIT_MS),
      { unref: true },
    );
  }

  /** One tick: skipped when paused or overlapping, else its execution is started (once, cluster-wide). */
  private async fire(slot: Slot, tickAt: number): Promise<void> {
    const { def } = slot;
    const log = this.deps.logger;
    try {
      await this.refresh(slot);
      if (slot.state.paused) return;
      const previous = slot.state.lastExecutionId;
      if (previous && skipsTick(def.overlap, await this.deps.runs.isRunning(previous))) {
        log.info({ schedule: def.id, tickAt: new Date(tickAt).toISOString(), running: previous }, `schedule ${def.id}: tick skipped, execution ${previous} still runs (overlap: skip)`);
        return;
      }
      const executionId = tickExecutionId(def.id, tickAt);
      const { started } = await this.deps.runs.start({ workflowId: def.workflow, executionId, input: def.input, metadata: { scheduleId: def.id, scheduledAt: new Date(tickAt).toISOString() } });
      // another node (or this one before a restart) started this tick: it records it
      if (started) await this.record(slot, SCHEDULE_EVENTS.ticked, { tickAt, executionId });
    } catch (err) {
      if (!this.stopped) log.error({ err, schedule: def.id, tickAt: new Date(tickAt).toISOString() }, `schedule ${def.id}: the tick could not start its execution`);
    }
  }
}
