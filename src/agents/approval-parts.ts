/**
 * Reading the `ai` SDK's approval requests out of a finished step: the pending tool calls a paused
 * run records (`run.approval-requested`) and answers with. Shared by the text and stream operations.
 */
import type { StepResult, ToolSet } from 'ai';
import type { PendingApproval } from '../../machines/agent-run.machine.js';

/** The tool calls of a step that wait for a decision (the SDK's `tool-approval-request` parts). */
export function pendingApprovalsOfStep(step: StepResult<ToolSet> | undefined): PendingApproval[] {
  const out: PendingApproval[] = [];
  for (const part of step?.content ?? []) {
    if (part.type === 'tool-approval-request') out.push({ approvalId: part.approvalId, toolCallId: part.toolCall.toolCallId, toolName: part.toolCall.toolName, args: part.toolCall.input });
  }
  return out;
}
