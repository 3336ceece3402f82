/**
 * The public API of eventloom: explicit named exports only.
 */
// workflows
export { createWorkflow, andThen, andWhen, andAll, andRace, andTap, andAgent, andWorkflow } from './workflows/builder.js';
export type {
  WorkflowDefinition,
  WorkflowConfig,
  WorkflowStep,
  StepContext,
  StepCustomEvent,
  StepFunction,
  StepType,
} from './workflows/types.js';
export type { WorkflowAgentRunner, WorkflowAgentRunOptions, WorkflowAgentResult, WorkflowAgentUsage, AgentsModuleLike } from './workflows/agent-bridge.js';
export { workflowsModule } from './http/routes/workflows.routes.js';
