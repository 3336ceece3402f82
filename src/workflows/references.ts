/**
 * What workflow steps name by id: the agent of every `andAgent` step, in the given workflows and in
 * the sub-workflows they run (`andWorkflow` holds its workflow itself, checked when the config is
 * built). At start-up a misspelt agent id stops the server with the step, the id and the closest
 * configured agent, instead of failing an execution with a 500 after its earlier steps ran.
 */
import { suggestName } from '../kernel/did-you-mean.js';
import type { AgentStep, WorkflowDefinition } from './types.js';
import { subWorkflowsOf, walkSteps } from './steps/walk.js';

/** Where an `andAgent` step sits, in words: `Workflow 'w' step 's' (in 'parent') (the sub-workflow of ...)`. */
type AgentStepVisitor = (step: AgentStep, where: string) => void;

/** Visits every `andAgent` step, nested steps and sub-workflows included (a shared sub-workflow once). */
function forEachAgentStep(workflows: Iterable<WorkflowDefinition>, visitor: AgentStepVisitor): void {
  const seen = new Set<WorkflowDefinition>();
  // `via`: how a sub-workflow is reached, for a message that leads from the config's workflow to it
  const visitWorkflow = (def: WorkflowDefinition, via: string) => {
    if (seen.has(def)) return;
    seen.add(def);
    walkSteps(def.steps, (s, parents) => {
      if (s.type === 'andAgent') visitor(s, `Workflow '${def.id}' step '${s.id}'${parents.length > 0 ? ` (in '${parents.join("' > '")}')` : ''}${via}`);
      for (const sub of subWorkflowsOf(s)) visitWorkflow(sub, ` (the sub-workflow of '${def.id}' step '${s.id}')`);
    });
  };
  for (const def of workflows) visitWorkflow(def, '');
}

/** The agent ids the steps name, each once, in the order they appear. */
export function agentIdsNamed(workflows: Iterable<WorkflowDefinition>): string[] {
  const ids = new Set<string>();
  forEachAgentStep(workflows, (s) => ids.add(s.agentId));
  return [...ids];
}

/** Every `andAgent` step naming an agent that is not in `agentIds`, as one line each. */
function unknownAgentReferences(workflows: Iterable<WorkflowDefinition>, agentIds: readonly string[]): string[] {
  const known = new Set(agentIds);
  const problems: string[] = [];
  forEachAgentStep(workflows, (s, where) => {
    if (!known.has(s.agentId)) problems.push(`${where}: agent '${s.agentId}' is not configured; ${suggestName(s.agentId, agentIds, 'agents')}`);
  });
  return problems;
}

/** Throws one error listing every unknown agent reference (none: returns). */
export function checkAgentReferences(workflows: Iterable<WorkflowDefinition>, agentIds: readonly string[]): void {
  const problems = unknownAgentReferences(workflows, agentIds);
  if (problems.length > 0) throw new Error(problems.join('\n'));
}
