/**
 * Answering a tool approval of an `andAgent` step's run from the agents side
 * (`POST /agents/:id/runs/:runId/approvals/:approvalId`): the decision becomes the resume data of
 * the suspended execution, so the step answers the run and completes with the agent's result. One
 * decision moves both: the execution must be suspended on that run (else 409), and once resumed the
 * run's approval is answered, so the other route then finds nothing to decide.
 */
import { AppError } from '../errors.js';
import { StreamNotFoundError } from '../runtime/actor-host.js';
import type { WorkflowExecutionMachine } from '../../machines/workflow-execution.machine.js';
import { TOOL_APPROVAL_REASON, type ToolApprovalDecision, type ToolApprovalSuspension } from '../contract/agent-bridge.js';
import { executionResult, resumeExecution } from './commands.js';
import { statusOf, type WorkflowEngine } from './engine.js';
import { executionStream } from './events.js';

export interface StepApprovalAnswer {
  executionId: string;
  runId: string;
  approvalId: string;
  answer: ToolApprovalDecision;
}

async function snapshotOf(engine: WorkflowEngine, executionId: string) {
  const stream = executionStream(executionId);
  try {
    return engine.host.peek<WorkflowExecutionMachine>(stream)?.snapshot ?? (await engine.host.rehydrate(engine.kind, stream)).snapshot;
  } catch (err) {
    if (err instanceof StreamNotFoundError) throw new AppError('NOT_FOUND', `Execution ${executionId} not found`);
    throw err;
  }
}

/** Resumes the execution suspended on run `runId` with the decision; answers with the run's ids and the execution result. */
export async function resumeForApproval(engine: WorkflowEngine, a: StepApprovalAnswer): Promise<Record<string, unknown>> {
  let snap = await snapshotOf(engine, a.executionId);
  const suspension = snap.context.suspension;
  const data = suspension?.suspendData as ToolApprovalSuspension | undefined;
  if (statusOf(snap) !== 'suspended' || suspension?.reason !== TOOL_APPROVAL_REASON || data?.runId !== a.runId) {
    throw new AppError('CONFLICT', `Approval ${a.approvalId} of run ${a.runId} was already answered: execution ${a.executionId} is not suspended on it (status: ${statusOf(snap)})`);
  }
  // a sub-workflow's step is resumed through its top-level execution (the API resumes top-level executions only)
  while (snap.context.parentExecutionId) snap = await snapshotOf(engine, snap.context.parentExecutionId);
  const root = snap.context;
  const run = await resumeExecution(engine, root.workflowId, root.executionId, a.answer).catch((err: unknown) => {
    // another decision resumed it first (the resume route): one decision only
    if (err instanceof AppError && err.code === 'NOT_FOUND') throw new AppError('CONFLICT', `Approval ${a.approvalId} of run ${a.runId} was already answered: ${err.message}`);
    throw err;
  });
  const rec = await run.settled;
  return {
    runId: a.runId,
    approvalId: a.approvalId,
    approved: a.answer.approved,
    workflowId: root.workflowId,
    executionId: root.executionId,
    execution: executionResult(rec, run.executionId, run.createdAt),
  };
}
