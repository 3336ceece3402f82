/**
 * `andSleep`: waits a duration, durably. The first attempt records its due time (`step.waiting`
 * with `until`); the engine fires it once at that time (`step.wait.fired`), after a restart too,
 * and a later attempt of the step waits for the recorded due time, never from zero. The step
 * passes its input through.
 */
import type { StepBase, StepContext } from '../types.js';
import { checkStep, type Common } from './checks.js';
import type { StepKind } from './kind.js';

export interface SleepStep extends StepBase {
  type: 'andSleep';
  /** ms, or a function of the step context giving them */
  duration: number | ((ctx: StepContext) => number | Promise<number>);
}

declare module '../types.js' {
  interface StepKinds {
    andSleep: SleepStep;
  }
}

/** A duration or due time a step computed: a finite number, else an error naming the step. */
export function checkTime(value: unknown, stepId: string, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new TypeError(`Step '${stepId}' needs ${what}, got ${JSON.stringify(value) ?? String(value)}`);
  return value;
}

export function andSleep<TIn = any>(def: Common & { duration: number | ((ctx: StepContext<TIn>) => number | Promise<number>) }): SleepStep {
  checkStep(def, 'andSleep');
  if (typeof def.duration !== 'function') checkTime(def.duration, def.id, 'a duration in ms (a number or a function)');
  return { ...def, type: 'andSleep' };
}

export const sleepKind: StepKind<SleepStep> = {
  type: 'andSleep',
  children: () => [],
  async run(step, run) {
    await run.wait(async () => {
      const ms = typeof step.duration === 'function' ? await step.duration(run.context()) : step.duration;
      return { kind: 'sleep', until: run.now() + Math.max(0, checkTime(ms, step.id, 'a duration in ms')) };
    });
    return run.data;
  },
  describe: (step) => (typeof step.duration === 'number' ? { duration: step.duration } : {}),
};
