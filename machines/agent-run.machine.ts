/**
 * The agent-run machine: one actor per agent call (text, stream, chat, object, stream-object, or a
 * workflow's andAgent step), one stream `run:<uuid>` in the log. Pure: no I/O imports.
 *
 * Records (each accepted event is one record of the same type):
 * - `run.started` (first record, the machine input): who asked what, with which options;
 * - `run.text-delta`: text produced since the last delta record, batched (never one per token);
 * - `run.step`: a finished step (text, tool calls, tool results and errors, usage) that is followed
 *   by another step; the last step travels inside `run.finished`, so a one-step run costs two records;
 * - `run.finished` (→ completed), `run.failed` (→ failed), `run.aborted` (→ cancelled);
 * - `run.approval-requested` (→ awaitingApproval): the model called tools that need a person's
 *   approval (the step itself is the `run.step` before it); the record holds the pending calls and
 *   the model messages produced so far, so any process can continue the run from the log;
 * - `run.approval-answered`: one decision; the last pending one returns the run to `running`, whose
 *   `generate` effect continues the conversation with the decisions (denied tools never run).
 *
 * Entering `running` emits the `generate` action: the `ai` SDK call is this actor's effect.
 */
import { setup, assign } from 'xstate';

export type AgentOperationType = 'text' | 'stream' | 'chat' | 'object' | 'stream-object' | 'workflow-step';

export interface AgentRunUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedInputTokens: number;
  reasoningTokens: number;
}

interface RecordedToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}
interface RecordedToolResult extends RecordedToolCall {
  output: unknown;
}
interface RecordedToolError extends RecordedToolCall {
  error: string;
}

export interface RecordedStep {
  /** 0-based */
  stepNumber: number;
  text: string;
  reasoning?: string;
  toolCalls: RecordedToolCall[];
  toolResults: RecordedToolResult[];
  toolErrors: RecordedToolError[];
  finishReason: string;
  usage: AgentRunUsage;
}

/** Data of `run.started`: the machine input. */
export interface AgentRunStarted {
  runId: string;
  agentId: string;
  operationType: AgentOperationType;
  /** the request's input as sent (string or messages) */
  input: unknown;
  /** the resolved call options, without `context` values that are not JSON */
  options: Record<string, unknown>;
  model: string;
  userId?: string;
  conversationId?: string;
  /** e.g. `{parentRunId, parentAgentId}` for a sub-agent run, `{executionId, stepId}` for a workflow step */
  metadata?: Record<string, unknown>;
  /** JSON Schema of an object operation */
  schema?: unknown;
  /** the trace of the run's spans: its own, or its caller's (workflow step, parent run) */
  traceId?: string;
}

/** A tool call waiting for a person's decision (the `ai` SDK's `tool-approval-request`). */
export type PendingApproval = {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  args: unknown;
};

export type ApprovalDecision = {
  approvalId: string;
  approved: boolean;
  reason?: string;
};

export type AgentRunEvent =
  | { type: 'run.text-delta'; step: number; text: string }
  | { type: 'run.step'; step: RecordedStep }
  | { type: 'run.finished'; steps: RecordedStep[]; text: string; output?: unknown; usage: AgentRunUsage; finishReason: string }
  | { type: 'run.approval-requested'; approvals: PendingApproval[]; messages: unknown[] }
  | { type: 'run.approval-answered'; approvalId: string; approved: boolean; reason?: string }
  | { type: 'run.failed'; error: string }
  | { type: 'run.aborted'; reason: string };

export interface AgentRunContext {
  agentId: string;
  operationType: AgentOperationType;
  steps: number;
  /** `run.text-delta` records so far (an event must change something to be accepted: xstate's `can()`) */
  deltas: number;
  /** approval ids still waiting for a decision */
  pending: string[];
}

export const agentRunMachine = setup({
  types: {} as { context: AgentRunContext; input: AgentRunStarted; events: AgentRunEvent },
  actions: {
    // the effect: the host hands it to the agents module's effect runner
    generate: () => {},
  },
  // named, not inline: the actor host's direct transition path (src/runtime/pure-transition.ts) takes named guards only
  guards: {
    hasApprovals: ({ event }) => event.type === 'run.approval-requested' && event.approvals.length > 0,
    isLastPending: ({ context, event }) => event.type === 'run.approval-answered' && context.pending.length === 1 && context.pending[0] === event.approvalId,
    isPending: ({ context, event }) => event.type === 'run.approval-answered' && context.pending.includes(event.approvalId),
  },
}).createMachine({
  id: 'agent-run',
  // xstate also builds a throwaway initial snapshot without input (inert actor scopes): no throwing here
  context: ({ input }) => ({ agentId: input?.agentId ?? '', operationType: input?.operationType ?? 'text', steps: 0, deltas: 0, pending: [] }),
  initial: 'running',
  states: {
    running: {
      entry: 'generate',
      on: {
        'run.text-delta': { actions: assign({ deltas: ({ context }) => context.deltas + 1 }) },
        'run.step': { actions: assign({ steps: ({ context }) => context.steps + 1 }) },
        'run.finished': { target: 'completed' },
        'run.failed': { target: 'failed' },
        'run.aborted': { target: 'cancelled' },
        'run.approval-requested': {
          target: 'awaitingApproval',
          guard: 'hasApprovals',
          actions: assign({ pending: ({ event }) => event.approvals.map((a) => a.approvalId) }),
        },
      },
    },
    awaitingApproval: {
      on: {
        'run.approval-answered': [
          // the last decision: the run goes on (re-entering `running` runs `generate` again)
          {
            guard: 'isLastPending',
            target: 'running',
            actions: assign({ pending: () => [] }),
          },
          {
            guard: 'isPending',
            actions: assign({ pending: ({ context, event }) => context.pending.filter((id) => id !== event.approvalId) }),
          },
        ],
        // a cancelled pending run (the workflow that waited for it was cancelled)
        'run.aborted': { target: 'cancelled' },
      },
    },
    completed: { type: 'final' },
    failed: { type: 'final' },
    cancelled: { type: 'final' },
  },
});

export const AGENT_RUN_KIND = 'agent-run';
export const AGENT_RUN_VERSION = 1;
export const AGENT_RUN_STARTED = 'run.started';
export const runStream = (runId: string) => `run:${runId}`;
/** Records that end a run (its machine's final states): nothing can follow one. */
export const RUN_TERMINAL_TYPES: ReadonlySet<string> = new Set(['run.finished', 'run.failed', 'run.aborted']);
