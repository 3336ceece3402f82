/**
 * The type of the `schedules` section of the config, here among the config leaves so `defineConfig`
 * checks it; src/schedules/config.ts checks the values at start-up.
 */
/** One entry of `schedules` in `defineConfig({...})`. */
export interface ScheduleConfig {
  /** letters, digits, `_`, `-`, `.` (it is part of the ids of the executions it starts) */
  id: string;
  /** the id of a configured workflow */
  workflow: string;
  /** five fields (minute precision) or six (a leading seconds field), e.g. `0 9 * * 1-5` or `*\/10 * * * * *` */
  cron: string;
  /** IANA time zone the cron is read in (default UTC), e.g. `Europe/Oslo` */
  timezone?: string;
  /** the workflow input of every execution it starts */
  input?: unknown;
  /** `skip` (default): a tick is skipped while the previous execution still runs; `allow`: start anyway */
  overlap?: 'skip' | 'allow';
  /** `none` (default): ticks missed while no server ran are dropped; `latest`: the most recent one runs once at start */
  catchUp?: 'none' | 'latest';
}
