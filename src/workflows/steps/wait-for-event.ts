/**
 * `andWaitForEvent`: waits, durably, for an event by name (`POST /events`, or the execution's own
 * events route, which keeps an event until a wait consumes it). The step's output is the event's
 * `data` (checked against `schema` when given; `match(data)` may refuse an event). With `timeoutMs`
 * the wait times out: the step fails with `Timed out waiting for event '<name>'`, or with
 * `onTimeout: "continue"` completes with `null`. The wait and its one firing are records of the
 * execution (`step.waiting`, `step.wait.fired`), so a restart neither loses nor repeats it.
 */
import type { ZodType } from 'zod';
import type { StepBase } from '../types.js';
import { checkStep, type Common } from './checks.js';
import type { StepKind } from './kind.js';
import { checkTime } from './sleep.js';

export interface WaitForEventStep extends StepBase {
  type: 'andWaitForEvent';
  /** the event name waited for */
  event: string;
  /** the event's data must pass it (400 on the execution's events route; other executions' events are not delivered) */
  schema?: ZodType;
  /** whether an event of that name is the one waited for */
  match?: (data: any) => boolean;
  timeoutMs?: number;
  onTimeout?: 'fail' | 'continue';
}

declare module '../types.js' {
  interface StepKinds {
    andWaitForEvent: WaitForEventStep;
  }
}

export const EVENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

export function andWaitForEvent(def: Common & { event: string; schema?: ZodType; match?: (data: any) => boolean; timeoutMs?: number; onTimeout?: 'fail' | 'continue' }): WaitForEventStep {
  // its timeoutMs is the wait's deadline (0 allowed: the wait times out at once), checked below
  checkStep({ ...def, timeoutMs: undefined }, 'andWaitForEvent');
  if (typeof def.event !== 'string' || !EVENT_NAME_PATTERN.test(def.event)) throw new TypeError(`andWaitForEvent '${def.id}' needs an event name (letters, digits, . _ : / -)`);
  if (def.match !== undefined && typeof def.match !== 'function') throw new TypeError(`andWaitForEvent '${def.id}': match must be a function of the event data`);
  if (def.timeoutMs !== undefined && checkTime(def.timeoutMs, def.id, 'a timeoutMs in ms') < 0) throw new TypeError(`andWaitForEvent '${def.id}': timeoutMs must be >= 0`);
  if (def.onTimeout !== undefined && def.onTimeout !== 'fail' && def.onTimeout !== 'continue') throw new TypeError(`andWaitForEvent '${def.id}': onTimeout must be 'fail' or 'continue'`);
  return { ...def, type: 'andWaitForEvent' };
}

/** Whether `data` is an event a wait step takes: it passes the schema (parsed) and `match`; a throwing match refuses it. */
export function acceptsEvent(step: WaitForEventStep, data: unknown): { ok: true; data: unknown } | { ok: false; issues?: string } {
  let value = data;
  if (step.schema) {
    const r = step.schema.safeParse(data);
    if (!r.success) return { ok: false, issues: r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ') };
    value = r.data;
  }
  try {
    return !step.match || step.match(value) ? { ok: true, data: value } : { ok: false };
  } catch {
    return { ok: false };
  }
}

export const waitForEventKind: StepKind<WaitForEventStep> = {
  type: 'andWaitForEvent',
  ownTimeout: true,
  children: () => [],
  async run(step, run) {
    const fired = await run.wait(() => ({ kind: 'event', name: step.event, ...(step.timeoutMs !== undefined ? { timeoutAt: run.now() + step.timeoutMs } : {}) }));
    if (fired.outcome === 'event') return fired.data ?? null;
    if (step.onTimeout === 'continue') return null;
    throw new Error(`Timed out waiting for event '${step.event}'`);
  },
  describe: (step) => ({ event: step.event, ...(step.timeoutMs !== undefined ? { timeoutMs: step.timeoutMs, onTimeout: step.onTimeout ?? 'fail' } : {}) }),
};
