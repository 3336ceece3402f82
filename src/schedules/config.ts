/**
 * The `schedules` section of the config: its shape, and the start-up check that turns each entry
 * into a resolved schedule (parsed cron, checked timezone, known workflow). Every mistake is a
 * start-up error naming the schedule and what to change, never a schedule that silently never fires.
 */
import { Cron } from 'croner';
import type { ScheduleConfig } from '../config/schedules.js';

export type { ScheduleConfig };

export interface ResolvedSchedule {
  id: string;
  workflow: string;
  cron: string;
  timezone: string;
  input: unknown;
  overlap: 'skip' | 'allow';
  catchUp: 'none' | 'latest';
  /** the parsed pattern (croner), read in `timezone` */
  pattern: Cron;
}

export interface WorkflowCheck {
  /** the ids of the configured workflows */
  workflowIds: readonly string[];
  /** why `input` is refused by the workflow's input schema, or undefined when it passes */
  inputProblem?(workflowId: string, input: unknown): string | undefined;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Whether `tz` is a time zone this runtime knows (Intl is what croner reads zones with). */
function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Parses a cron pattern in a zone; throws croner's own message on a bad pattern. */
export function parseCron(cron: string, timezone: string): Cron {
  return new Cron(cron, { timezone, paused: true });
}

/** Checks the config section; throws an Error naming the schedule and the fix at the first mistake. */
export function resolveSchedules(section: unknown, check: WorkflowCheck): ResolvedSchedule[] {
  if (section === undefined || section === null) return [];
  if (!Array.isArray(section)) throw new Error('config.schedules must be an array of { id, workflow, cron, timezone?, input?, overlap?, catchUp? }');
  const seen = new Set<string>();
  return section.map((raw: unknown, i): ResolvedSchedule => {
    const s = (raw ?? {}) as Partial<Record<keyof ScheduleConfig, unknown>>;
    const where = typeof s.id === 'string' && s.id ? `Schedule '${s.id}'` : `config.schedules[${i}]`;
    const fail = (msg: string): never => {
      throw new Error(`${where}: ${msg}`);
    };
    if (typeof raw !== 'object' || raw === null) fail('must be an object { id, workflow, cron, ... }');
    if (typeof s.id !== 'string' || !ID.test(s.id)) fail('id must be 1 to 64 letters, digits, "_", "-" or "." (starting with a letter or digit)');
    const id = s.id as string;
    if (seen.has(id)) fail(`the id is used by another schedule too; give each schedule its own id`);
    seen.add(id);
    if (typeof s.workflow !== 'string' || !check.workflowIds.includes(s.workflow)) {
      const known = check.workflowIds.length ? check.workflowIds.join(', ') : 'none are configured';
      fail(`workflow ${JSON.stringify(s.workflow)} is not a configured workflow (configured: ${known}); set workflow to one of them`);
    }
    const timezone = s.timezone === undefined ? 'UTC' : s.timezone;
    if (typeof timezone !== 'string' || !isTimeZone(timezone)) fail(`timezone ${JSON.stringify(s.timezone)} is not an IANA time zone; use e.g. "UTC" or "Europe/Oslo"`);
    if (typeof s.cron !== 'string' || !s.cron.trim()) fail('cron is required, e.g. "0 9 * * 1-5" (minute hour day month weekday) or with a leading seconds field');
    let pattern: Cron;
    try {
      pattern = parseCron(s.cron as string, timezone as string);
    } catch (err) {
      return fail(`cron ${JSON.stringify(s.cron)} is not a valid cron pattern (${(err as Error).message}); use five fields (minute hour day month weekday) or six with a leading seconds field`);
    }
    if (pattern.nextRun(new Date(0)) === null) fail(`cron ${JSON.stringify(s.cron)} never fires; change the pattern`);
    const overlap = s.overlap ?? 'skip';
    if (overlap !== 'skip' && overlap !== 'allow') fail(`overlap must be "skip" or "allow", not ${JSON.stringify(s.overlap)}`);
    const catchUp = s.catchUp ?? 'none';
    if (catchUp !== 'none' && catchUp !== 'latest') fail(`catchUp must be "none" or "latest", not ${JSON.stringify(s.catchUp)}`);
    const problem = check.inputProblem?.(s.workflow as string, s.input);
    if (problem) fail(`input does not fit workflow '${String(s.workflow)}': ${problem}; fix the schedule's input`);
    return {
      id,
      workflow: s.workflow as string,
      cron: s.cron as string,
      timezone: timezone as string,
      input: s.input,
      overlap: overlap as 'skip' | 'allow',
      catchUp: catchUp as 'none' | 'latest',
      pattern,
    };
  });
}
