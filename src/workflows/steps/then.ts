/** `andThen`: runs a function on the step's input; returning nothing passes the input through. */
import type { StepFunction, ThenStep } from '../types.js';
import { checkStep, type Common, type Schemas } from './checks.js';
import type { StepKind } from './kind.js';

export function andThen<TIn = any, TOut = any>(def: Common & Schemas & { execute: StepFunction<TIn, TOut> }): ThenStep {
  checkStep(def, 'andThen');
  if (typeof def.execute !== 'function') throw new TypeError(`andThen '${def.id}' needs an execute function`);
  return { ...def, type: 'andThen' };
}

export const thenKind: StepKind<ThenStep> = {
  type: 'andThen',
  children: () => [],
  async run(step, run) {
    const out = await step.execute(run.context());
    return out === undefined ? run.data : out;
  },
};
