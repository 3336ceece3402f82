/**
 * `andWhen`: runs its one nested step when the condition holds, else the step is skipped (data
 * passes on). The condition is workflow code deciding the path, so replay evaluates it even when
 * it feeds the nested step its recorded outcome.
 */
import type { StepContext, WhenStep, WorkflowStep } from '../types.js';
import { checkGroup, checkStep, type Common } from './checks.js';
import { SKIPPED, type StepKind } from './kind.js';

export function andWhen(def: Common & { condition: (ctx: StepContext) => boolean | Promise<boolean>; step: WorkflowStep }): WhenStep {
  checkStep(def, 'andWhen');
  if (typeof def.condition !== 'function') throw new TypeError(`andWhen '${def.id}' needs a condition function`);
  checkGroup('andWhen', def.id, [def.step]);
  return { ...def, type: 'andWhen' };
}

export const whenKind: StepKind<WhenStep> = {
  type: 'andWhen',
  nest: 'branch',
  childOutput: 'whole',
  children: (step) => [step.step],
  async run(step, run) {
    const ok = await step.condition(run.context());
    if (!ok) return SKIPPED;
    const out = await run.runNested(step.step, run.data, run.signal);
    return out === SKIPPED ? run.data : out;
  },
  describe: (step, describeChild) => ({ nestedStep: describeChild(step.step, 0) }),
  // suspended at the andWhen means suspended in its nested step: that step's schema applies
  resumeSchema: (step) => step.resumeSchema ?? step.step.resumeSchema,
  replay: { feed: (step, fed) => ({ ...step, step: fed(step.step) }) },
};
