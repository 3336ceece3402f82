/**
 * The one walk over a step tree: depth-first, in declaration order, through each kind's
 * `children()` and, when asked, into the workflows steps run as child executions. The engine and
 * replay collect definitions with it, the builder checks schemas with it, replay points, agent
 * references and resume checks find steps with it.
 */
import type { WorkflowDefinition, WorkflowStep } from '../types.js';
import { kindOf } from './registry.js';

/** The steps nested directly in a step (its kind's children; a sub-workflow's steps are its own). */
function childrenOf(step: WorkflowStep): readonly WorkflowStep[] {
  return kindOf(step).children(step);
}

/** The workflows a step runs as child executions. */
export function subWorkflowsOf(step: WorkflowStep): readonly WorkflowDefinition[] {
  return kindOf(step).subWorkflows?.(step) ?? [];
}

export interface WalkOptions {
  /** also visit the steps of the workflows steps run (under the step that runs them); a workflow already on the path is not entered again */
  subWorkflows?: boolean;
}

/**
 * Visits `steps` and everything nested in them, parents first. `parents` are the ids from the
 * outermost step down to the visited step's parent. A visitor returning `false` skips what is
 * nested in that step.
 */
export function walkSteps(
  steps: readonly WorkflowStep[],
  visit: (step: WorkflowStep, parents: readonly string[]) => void | boolean,
  options: WalkOptions = {},
  within: ReadonlySet<WorkflowDefinition> = new Set(),
): void {
  const go = (step: WorkflowStep, parents: readonly string[], on: ReadonlySet<WorkflowDefinition>) => {
    if (visit(step, parents) === false) return;
    const here = [...parents, step.id];
    for (const child of childrenOf(step)) go(child, here, on);
    if (!options.subWorkflows) return;
    // a definition cannot contain itself through builders; the guard keeps a hand-made cycle finite
    for (const def of subWorkflowsOf(step)) {
      if (on.has(def)) continue;
      const inner = new Set(on).add(def);
      for (const s of def.steps) go(s, here, inner);
    }
  };
  for (const s of steps) go(s, [], within);
}

/** Whether `step` or a step nested in it (not in sub-workflows) satisfies `test`. */
export function someStep(step: WorkflowStep, test: (step: WorkflowStep) => boolean): boolean {
  let found = false;
  walkSteps([step], (s) => {
    if (found) return false;
    if (test(s)) found = true;
    return !found;
  });
  return found;
}

/** Every definition reachable from `workflows` (the workflows their steps run included), by id; the first of an id wins. */
export function collectDefinitions(workflows: readonly WorkflowDefinition[]): Map<string, WorkflowDefinition> {
  const out = new Map<string, WorkflowDefinition>();
  const visitDef = (def: WorkflowDefinition) => {
    if (out.has(def.id)) return;
    out.set(def.id, def);
    walkSteps(def.steps, (s) => subWorkflowsOf(s).forEach(visitDef));
  };
  workflows.forEach(visitDef);
  return out;
}
