/**
 * Agents calling agents: sub-agent delegation (the parent's model calls `delegate_to_<id>`) and the
 * workflow bridge (`andAgent` steps, src/contract/agent-bridge.ts). Both start an ordinary run of
 * the called agent, so it appears in that agent's history (`metadata` links it to its caller).
 *
 * A sub-agent sees its parent's context and user, reads (never writes) the parent's conversation,
 * and inside a streaming parent streams its parts into the parent's stream.
 */
import { toJsonSchema } from '../kernel/json-schema.js';
import { AppError, formatIssues } from '../errors.js';
import { ToolApprovalPendingError, type WorkflowAgentResult, type WorkflowAgentRunOptions, type WorkflowAgentRunner } from '../contract/agent-bridge.js';
import type { ZodType } from 'zod';
import { decideWaitingRun } from './approvals.js';
import { newRunId, type AgentRuns } from './agent-runs.js';
import { resolveCallOptions } from './call-options.js';
import { isAwaitingApproval, runText, type TextOutcome } from './ops-text.js';
import { runSubAgentStream } from './ops-stream.js';

export function installSubAgentRunner(runs: AgentRuns): void {
  runs.subAgentRunner = async (sub, task, parent, signal) => {
    const memory = {
      ...(parent.userId !== undefined ? { userId: parent.userId } : {}),
      ...(parent.conversationId !== undefined ? { conversationId: parent.conversationId } : {}),
      options: { readOnly: true },
    };
    const options = resolveCallOptions({ context: parent.context, memory }, sub);
    const prepared = await runs.prepare({ agent: sub, input: task, options, headers: parent.headers, runId: newRunId(), parentPath: parent.agentPath, signal });
    if (parent.forward) return runSubAgentStream(runs, prepared, task, parent, signal);
    const r = await runText(runs, prepared, task, signal, { metadata: { parentRunId: parent.runId, parentAgentId: parent.agentId } });
    return r.text;
  };
}

/** The `agentRunner` the workflow engine finds on `modules.get('agents')`. */
export function createWorkflowAgentRunner(runs: AgentRuns): WorkflowAgentRunner {
  return {
    async run(agentId: string, prompt: string, o: WorkflowAgentRunOptions): Promise<WorkflowAgentResult> {
      const agent = runs.registry.get(agentId);
      if (!agent) throw new AppError('NOT_FOUND', `Agent ${agentId} not found`);
      const memory = { ...(o.userId !== undefined ? { userId: o.userId } : {}), ...(o.conversationId !== undefined ? { conversationId: o.conversationId } : {}) };
      const options = resolveCallOptions({ context: o.context ?? {}, memory }, agent);
      const prepared = await runs.prepare({ agent, input: prompt, options, headers: {}, runId: newRunId(), signal: o.signal });
      const metadata = o.origin ? { workflowId: o.origin.workflowId, executionId: o.origin.executionId, stepId: o.origin.stepId } : undefined;
      const output = o.schema ? { type: 'object' as const, schema: toJsonSchema(o.schema) } : undefined;
      const r = await runText(runs, prepared, prompt, o.signal, { operationType: 'workflow-step', metadata, output, traceId: o.origin?.traceId });
      return stepResult(agentId, r, o.schema);
    },
    async answer(agentId, runId, decision, o): Promise<WorkflowAgentResult> {
      const agent = runs.registry.get(agentId);
      if (!agent) throw new AppError('NOT_FOUND', `Agent ${agentId} not found`);
      return stepResult(agentId, await decideWaitingRun(runs, agent, runId, decision, o.signal), o.schema);
    },
  };
}

/** A step's result from a run's outcome: a pause on tool approvals suspends the step (ToolApprovalPendingError). */
function stepResult(agentId: string, r: TextOutcome, schema: ZodType | undefined): WorkflowAgentResult {
  if (isAwaitingApproval(r)) throw new ToolApprovalPendingError(agentId, r.runId, r.pendingApprovals);
  const result: WorkflowAgentResult = { text: r.text, usage: { ...r.usage } };
  if (schema) {
    const parsed = schema.safeParse(r.output);
    if (!parsed.success) throw new Error(`Generated object does not match schema: ${formatIssues(parsed.error.issues, '(root)')}`);
    result.object = parsed.data;
  }
  return result;
}
