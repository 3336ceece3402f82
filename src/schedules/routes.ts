/**
 * The schedule routes (docs/api-reference.md "Schedules"): the list reads like `GET /workflows`
 * (auth class `management`); pause, resume and trigger change what runs, like execute (`execution`).
 */
import { z } from 'zod';
import { ok, type RouteDef } from '../contract/routes.js';
import { iso } from '../kernel/time.js';
import type { Scheduler, ScheduleView } from './scheduler.js';

const TAGS = ['Schedules'];
const at = (ms: number | undefined) => (ms === undefined ? null : iso(ms));

const scheduleSchema = z.object({
  id: z.string(),
  workflow: z.string(),
  cron: z.string(),
  timezone: z.string(),
  paused: z.boolean(),
  nextRunAt: z.string().nullable().describe('the next tick (ISO 8601); null while paused'),
  lastRunAt: z.string().nullable().describe('when the last execution it started was due (a tick) or triggered'),
  lastExecutionId: z.string().nullable(),
});

/** A schedule as the API shows it: times in ISO 8601, absent values as null. */
const toScheduleJson = (v: ScheduleView) => ({ ...v, nextRunAt: at(v.nextRunAt), lastRunAt: at(v.lastRunAt), lastExecutionId: v.lastExecutionId ?? null });

export function scheduleRoutes(scheduler: Scheduler): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/schedules',
      auth: 'management',
      summary: 'List the configured schedules with their state and next tick',
      tags: TAGS,
      response: z.array(scheduleSchema),
      handler: async () => ok((await scheduler.list()).map(toScheduleJson)),
    },
    {
      method: 'POST',
      path: '/schedules/:id/pause',
      auth: 'execution',
      summary: 'Pause a schedule: its ticks start nothing until it is resumed (on every node)',
      tags: TAGS,
      response: scheduleSchema,
      handler: async (ctx) => ok(toScheduleJson(await scheduler.pause(ctx.params.id))),
    },
    {
      method: 'POST',
      path: '/schedules/:id/resume',
      auth: 'execution',
      summary: 'Resume a paused schedule from its next tick (missed ticks are not started)',
      tags: TAGS,
      response: scheduleSchema,
      handler: async (ctx) => ok(toScheduleJson(await scheduler.resume(ctx.params.id))),
    },
    {
      method: 'POST',
      path: '/schedules/:id/trigger',
      auth: 'execution',
      summary: "Start one execution of the schedule's workflow now, outside its tick sequence",
      tags: TAGS,
      response: z.object({ executionId: z.string() }),
      handler: async (ctx) => ok(await scheduler.trigger(ctx.params.id), 202),
    },
  ];
}
