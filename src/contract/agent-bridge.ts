/**
 * How an `andAgent` step reaches the agents domain without either domain importing the other: a
 * port of the module contract, implemented by the agents module's `agentRunner` and handed to the
 * workflows module by the composition root (src/server-assembly.ts). Without it the step fails with a clear
 * message instead of the server failing to start.
 *
 * Tool approvals: a run whose model calls a tool needing approval throws `ToolApprovalPendingError`;
 * the step suspends with reason `tool-approval` and the run's pending calls as suspension data. The
 * resume data (`{ approved, reason? }`) is the decision: `answer` records it for the run's pending
 * calls and continues the run, so the step completes with the agent's result.
 */
import { z, type ZodType } from 'zod';

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

/** A decision on the pending tool calls of a step's agent run: the resume data of a `tool-approval` suspension. */
export const ToolApprovalDecision = z.object({ approved: z.boolean(), reason: z.string().max(4000).optional() }).strict();
export type ToolApprovalDecision = z.infer<typeof ToolApprovalDecision>;

export const TOOL_APPROVAL_REASON = 'tool-approval';

export interface PendingToolCall {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/** The suspension data of a step whose agent run waits for approvals. */
export interface ToolApprovalSuspension {
  type: 'tool-approval';
  /** the andAgent step (nested ones included) whose run waits */
  stepId: string;
  agentId: string;
  runId: string;
  approvals: PendingToolCall[];
}

/** Thrown by the runner when the run paused on tool calls needing approval. */
export class ToolApprovalPendingError extends Error {
  constructor(
    readonly agentId: string,
    readonly runId: string,
    readonly approvals: PendingToolCall[],
  ) {
    super(`Agent ${agentId} is waiting for approval of ${approvals.map((a) => a.toolName).join(', ')} (run ${runId})`);
    this.name = 'ToolApprovalPendingError';
  }
}

/** The tool-approval suspension of `stepId` in a resumed step's suspension data, if that is what it was. */
export function toolApprovalSuspensionOf(suspendData: unknown, stepId: string): ToolApprovalSuspension | undefined {
  const s = suspendData as Partial<ToolApprovalSuspension> | null | undefined;
  if (!s || s.type !== 'tool-approval' || s.stepId !== stepId || typeof s.runId !== 'string' || !Array.isArray(s.approvals)) return undefined;
  return s as ToolApprovalSuspension;
}

interface WorkflowAgentAnswerOptions {
  schema?: ZodType;
  signal: AbortSignal;
}

export interface WorkflowAgentRunner {
  run(agentId: string, prompt: string, options: WorkflowAgentRunOptions): Promise<WorkflowAgentResult>;
  /**
   * Records `decision` for every call run `runId` still waits for and continues the run; resolves
   * with its result, throws `ToolApprovalPendingError` when the model asks for approval again.
   * Optional for runners without tool approvals (a step resumed with a decision then fails).
   */
  answer?(agentId: string, runId: string, decision: ToolApprovalDecision, options: WorkflowAgentAnswerOptions): Promise<WorkflowAgentResult>;
}

export class AgentRunnerMissingError extends Error {
  constructor(agentId: string) {
    super(`Cannot run agent '${agentId}': no agent runner is available (the agents module is not loaded)`);
    this.name = 'AgentRunnerMissingError';
  }
}
