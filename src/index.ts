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
// logs and observability
export { observabilityModule, type ObservabilityConfig, type ObservabilityModule } from './observability/module.js';
export { loggerFor, CORRELATION_KEYS, type LogBindings } from './observability/logger-for.js';
export type { LogEntry } from './observability/log-entry.js';
export type { Span, SpanNode, ObsLogRecord } from './observability/span-types.js';
