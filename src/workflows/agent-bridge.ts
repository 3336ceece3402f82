/**
 * How an `andAgent` step reaches the agents domain without importing it: the agents module exposes
 * an `agentRunner` implementing `WorkflowAgentRunner` (registered under the module name `agents`),
 * and the workflow engine looks it up when a step runs. Without it the step fails with a clear
 * message instead of the server failing to start.
 */
import type { ZodType } from 'zod';

export interface WorkflowAgentUsage {
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
  [key: string]: number | undefined;
}

export interface WorkflowAgentRunOptions {
  /** structured output schema: the run returns `object` validated against it */
  schema?: ZodType;
  /** the execution's context (the caller's options.context, `user` included when authenticated) */
  context: Record<string, unknown>;
  userId?: string;
  conversationId?: string;
  /** aborted when the step is abandoned (suspend, cancel, lost race) */
  signal: AbortSignal;
  /** where the call comes from, for the agent's history (`operationType: "workflow-step"`) */
  origin?: { workflowId: string; executionId: string; stepId: string; traceId?: string };
}

export interface WorkflowAgentResult {
  text: string;
  object?: unknown;
  usage?: WorkflowAgentUsage;
}

export interface WorkflowAgentRunner {
  run(agentId: string, prompt: string, options: WorkflowAgentRunOptions): Promise<WorkflowAgentResult>;
}

export class AgentRunnerMissingError extends Error {
  constructor(agentId: string) {
    super(`Cannot run agent '${agentId}': no agent runner is available (the agents module is not loaded)`);
    this.name = 'AgentRunnerMissingError';
  }
}

