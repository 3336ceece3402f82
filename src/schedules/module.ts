/**
 * The `schedules` server module: checks the config section at start-up, runs the scheduler from
 * start to stop, and serves the schedule routes. It reaches workflows only through the
 * `ScheduleRuns` port the composition root hands it.
 */
import type { ServerContext, ServerModule } from '../contract/server-module.js';
import { systemClock, type Clock } from '../kernel/clock.js';
import { resolveSchedules } from './config.js';
import type { ScheduleRuns } from './ports.js';
import { scheduleRoutes } from './routes.js';
import { Scheduler } from './scheduler.js';

export interface SchedulesModuleDeps {
  runs: ScheduleRuns;
  /** the scheduler's time (tests move a manual clock) */
  clock?: Clock;
}

export interface SchedulesModule extends ServerModule {
  scheduler: Scheduler;
}

export function schedulesModule(ctx: ServerContext, deps: SchedulesModuleDeps): SchedulesModule {
  const runs = deps.runs;
  const schedules = resolveSchedules(ctx.config.schedules, {
    workflowIds: runs.workflowIds(),
    inputProblem: (w, input) => runs.inputProblem(w, input),
  });
  const logger = ctx.logger.child({ component: 'schedules' });
  const scheduler = new Scheduler(schedules, {
    log: ctx.log,
    clock: deps.clock ?? systemClock,
    logger,
    runs,
  });
  return {
    name: 'schedules',
    scheduler,
    routes: scheduleRoutes(scheduler),
    // the explorer offers the configured ids for `:id`
    docs: () => ({ pathParams: [{ prefix: '/schedules/', param: 'id', values: scheduler.ids() }] }),
    async start() {
      await scheduler.start();
      if (schedules.length) logger.info({ schedules: schedules.map((s) => s.id) }, `${schedules.length} schedule(s) armed`);
    },
    stop: () => scheduler.stop(),
  };
}
