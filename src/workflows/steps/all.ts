/** `andAll`: runs its nested steps side by side; waits for all and fails with the first failure in declaration order. */
import type { AllStep, WorkflowStep } from '../types.js';
import { checkGroup, checkStep, type Common } from './checks.js';
import { childController, SKIPPED, type StepKind } from './kind.js';

export function andAll(def: Common & { steps: WorkflowStep[] }): AllStep {
  checkStep(def, 'andAll');
  checkGroup('andAll', def.id, def.steps);
  return { ...def, type: 'andAll' };
}

export const allKind: StepKind<AllStep> = {
  type: 'andAll',
  nest: 'parallel',
  childOutput: 'by-index',
  children: (step) => step.steps,
  async run(step, run) {
    const links = step.steps.map(() => childController(run.signal));
    try {
      const settled = await Promise.allSettled(step.steps.map((s, i) => run.runNested(s, run.data, links[i].controller.signal)));
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      return settled.map((r) => {
        const v = (r as PromiseFulfilledResult<unknown>).value;
        return v === SKIPPED ? run.data : v;
      });
    } finally {
      for (const l of links) l.dispose();
    }
  },
  describe: (step, describeChild) => ({ subSteps: step.steps.map(describeChild), subStepsCount: step.steps.length }),
};
