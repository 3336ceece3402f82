/**
 * `andWorkflow`: runs another workflow as a child execution (its own stream) and completes,
 * suspends or fails with it. Its effect lives in that stream: replay feeds its recorded result.
 */
import type { SubWorkflowStep, WorkflowDefinition } from '../types.js';
import { checkStep, type Common } from './checks.js';
import type { StepKind } from './kind.js';

export function andWorkflow(def: Common & { workflow: WorkflowDefinition }): SubWorkflowStep {
  checkStep(def, 'andWorkflow');
  if (!def.workflow || def.workflow.kind !== 'eventloom.workflow') throw new TypeError(`andWorkflow '${def.id}' needs a workflow built with createWorkflow`);
  return { ...def, type: 'andWorkflow' };
}

export const workflowKind: StepKind<SubWorkflowStep> = {
  type: 'andWorkflow',
  nest: 'sub-workflow',
  children: () => [],
  subWorkflows: (step) => [step.workflow],
  run: (step, run) => run.env.runChild({ step, input: run.data, signal: run.signal, isResume: run.env.isResume, resumeData: run.env.resumeData }),
  describe: (step) => ({ workflowId: step.workflow.id }),
  replay: { foreignEffect: true },
};
