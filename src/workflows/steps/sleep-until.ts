/**
 * `andSleepUntil`: waits until a date, durably (recorded and fired like andSleep, see sleep.ts).
 * The date is a Date, an ISO string, or a function of the step context giving one; a past date
 * fires at once. The step passes its input through.
 */
import type { StepBase, StepContext } from '../types.js';
import { checkStep, type Common } from './checks.js';
import type { StepKind } from './kind.js';
import { checkTime } from './sleep.js';

type DateLike = Date | string;

export interface SleepUntilStep extends StepBase {
  type: 'andSleepUntil';
  date: DateLike | ((ctx: StepContext) => DateLike | Promise<DateLike>);
}

declare module '../types.js' {
  interface StepKinds {
    andSleepUntil: SleepUntilStep;
  }
}

/** A Date or ISO string as epoch ms; anything else is an error naming the step. */
function timeOf(date: unknown, stepId: string): number {
  const t = date instanceof Date ? date.getTime() : typeof date === 'string' && /^\d{4}-\d{2}-\d{2}/.test(date) ? Date.parse(date) : NaN;
  return checkTime(t, stepId, 'a date (a Date or an ISO 8601 string)');
}

export function andSleepUntil<TIn = any>(def: Common & { date: DateLike | ((ctx: StepContext<TIn>) => DateLike | Promise<DateLike>) }): SleepUntilStep {
  checkStep(def, 'andSleepUntil');
  if (typeof def.date !== 'function') timeOf(def.date, def.id);
  return { ...def, type: 'andSleepUntil' };
}

export const sleepUntilKind: StepKind<SleepUntilStep> = {
  type: 'andSleepUntil',
  children: () => [],
  async run(step, run) {
    await run.wait(async () => {
      const date = typeof step.date === 'function' ? await step.date(run.context()) : step.date;
      return { kind: 'sleep', until: timeOf(date, step.id) };
    });
    return run.data;
  },
  describe: (step) => (typeof step.date === 'function' ? {} : { date: new Date(timeOf(step.date, step.id)).toISOString() }),
};
