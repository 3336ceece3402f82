/** `andTap`: runs a function for its side effect; its failures are logged, never the run's, and data passes through. */
import type { StepFunction, TapStep } from '../types.js';
import { checkStep, type Common, type Schemas } from './checks.js';
import { SuspendSignal, type StepKind } from './kind.js';

export function andTap<TIn = any>(def: Common & Schemas & { execute: StepFunction<TIn, unknown> }): TapStep {
  checkStep(def, 'andTap');
  if (typeof def.execute !== 'function') throw new TypeError(`andTap '${def.id}' needs an execute function`);
  return { ...def, type: 'andTap' };
}

export const tapKind: StepKind<TapStep> = {
  type: 'andTap',
  passThrough: true,
  children: () => [],
  async run(step, run) {
    try {
      await step.execute(run.context());
    } catch (err) {
      if (err instanceof SuspendSignal) throw err;
      // a failure of the user's code, not of the server: warn
      run.logger().warn({ err }, 'andTap step failed (ignored)');
    }
    return run.data;
  },
};
