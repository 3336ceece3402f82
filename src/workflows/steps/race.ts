/** `andRace`: runs its nested steps side by side; takes the first to settle and aborts the others without awaiting them. */
import type { RaceStep, WorkflowStep } from '../types.js';
import { checkGroup, checkStep, type Common } from './checks.js';
import { childController, SKIPPED, type StepKind } from './kind.js';

export function andRace(def: Common & { steps: WorkflowStep[] }): RaceStep {
  checkStep(def, 'andRace');
  checkGroup('andRace', def.id, def.steps);
  return { ...def, type: 'andRace' };
}

export const raceKind: StepKind<RaceStep> = {
  type: 'andRace',
  nest: 'race',
  children: (step) => step.steps,
  async run(step, run) {
    const links = step.steps.map(() => childController(run.signal));
    try {
      return await new Promise<unknown>((resolve, reject) => {
        let done = false;
        step.steps.forEach((s, i) => {
          run.runNested(s, run.data, links[i].controller.signal).then(
            (v) => settle(i, () => resolve(v === SKIPPED ? run.data : v)),
            (e) => settle(i, () => reject(e)),
          );
        });
        function settle(winner: number, finish: () => void) {
          if (done) return;
          done = true;
          links.forEach((l, j) => {
            if (j !== winner) l.controller.abort(new Error(`Lost the race in '${step.id}'`));
          });
          finish();
        }
      });
    } finally {
      for (const l of links) l.dispose();
    }
  },
  describe: (step, describeChild) => ({ subSteps: step.steps.map(describeChild), subStepsCount: step.steps.length }),
};
