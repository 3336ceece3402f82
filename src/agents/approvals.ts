/**
 * Tool approvals of agent runs: `POST /agents/:id/runs/:runId/approvals/:approvalId`.
 *
 * A paused run lives only in the log (`run.approval-requested` holds the pending calls and the model
 * messages produced so far), never in process memory: answering reads the run's stream, prepares the
 * agent call again from `run.started` (same input, same options), and records the decision through
 * the run's actor. The last decision re-enters `running`, whose `generate` effect continues the
 * conversation in this process with the SDK's `tool-approval-response` parts, so a pending approval
 * survives a crash and can be answered on any node.
 */
import { z } from 'zod';
import type { ModelMessage } from 'ai';
import { AppError } from '../errors.js';
import { EventRejectedError } from '../runtime/actor-host.js';
import { StreamConflictError, type EventLog } from '../log/types.js';
import { runStream, type AgentRunStarted, type ApprovalDecision, type PendingApproval } from '../../machines/agent-run.machine.js';
import type { AgentRuns } from './agent-runs.js';
import type { Agent } from './define-agent.js';
import type { ResolvedCallOptions } from './call-options.js';
import { continueText, type TextOutcome } from './ops-text.js';

export const ApprovalAnswer = z.object({ approved: z.boolean(), reason: z.string().max(4000).optional() }).strict();
export type ApprovalAnswer = z.infer<typeof ApprovalAnswer>;

/** A run waiting for decisions, as its records tell. */
interface PausedRun {
  started: AgentRunStarted;
  /** the calls of the last pause */
  approvals: PendingApproval[];
  /** decisions recorded since that pause */
  decisions: ApprovalDecision[];
  /** model messages after the prompt, up to the pause */
  tail: ModelMessage[];
}

/** Reads a run's stream; throws the 404/409 a client should see when it is not waiting for `approvalId`. */
async function readPausedRun(log: EventLog, agentId: string, runId: string, approvalId: string): Promise<PausedRun> {
  const paused = await readWaitingRun(log, agentId, runId);
  if (!paused.approvals.some((a) => a.approvalId === approvalId)) throw new AppError('NOT_FOUND', `Approval ${approvalId} not found in run ${runId}`);
  if (paused.decisions.some((d) => d.approvalId === approvalId)) throw new AppError('CONFLICT', `Approval ${approvalId} of run ${runId} was already answered`);
  return paused;
}

/** Reads a run's stream; throws 404 for an unknown run, 409 when it is not waiting for any approval. */
async function readWaitingRun(log: EventLog, agentId: string, runId: string): Promise<PausedRun> {
  const records = await log.readStream(runStream(runId));
  const started = records[0]?.type === 'run.started' ? (records[0].data as AgentRunStarted) : undefined;
  if (!started || started.agentId !== agentId) throw new AppError('NOT_FOUND', `Run ${runId} of agent ${agentId} not found`);
  let pause = -1;
  for (let i = records.length - 1; i > 0; i--) {
    if (records[i].type === 'run.approval-requested') {
      pause = i;
      break;
    }
  }
  const after = pause < 0 ? [] : records.slice(pause + 1);
  if (pause < 0 || after.some((r) => r.type !== 'run.approval-answered')) throw new AppError('CONFLICT', `Run ${runId} is not waiting for an approval`);
  const data = records[pause].data as { approvals: PendingApproval[]; messages: ModelMessage[] };
  const decisions = after.map((r) => r.data as ApprovalDecision);
  return { started, approvals: data.approvals, decisions, tail: data.messages };
}

/** The answer while other calls of the same pause still wait. */
function stillPending(paused: PausedRun, runId: string, decided: string) {
  const done = new Set([...paused.decisions.map((d) => d.approvalId), decided]);
  return { status: 'awaiting-approval' as const, runId, pendingApprovals: paused.approvals.filter((a) => !done.has(a.approvalId)) };
}

export interface AnswerArgs {
  agent: Agent;
  runId: string;
  approvalId: string;
  answer: ApprovalAnswer;
  headers: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * Records one decision and, when it was the last of its pause, continues the run; answers what
 * `/text` would have (the final response, or `awaiting-approval` again when the model asks anew).
 */
export async function answerApproval(runs: AgentRuns, a: AnswerArgs): Promise<TextOutcome | ReturnType<typeof stillPending> | Record<string, unknown>> {
  const paused = await readPausedRun(runs.deps.host.log, a.agent.id, a.runId, a.approvalId);
  const origin = workflowOrigin(paused.started);
  // a workflow step's run: the decision is the step's resume data, so the workflow and the run move together
  if (origin && runs.workflowApprovals) return runs.workflowApprovals.resume({ ...origin, agentId: a.agent.id, runId: a.runId, approvalId: a.approvalId, answer: a.answer });
  const decision = decisionOf(a.approvalId, a.answer);
  const result = await continuePausedRun(
    runs,
    { agent: a.agent, runId: a.runId, paused, decisions: [decision], headers: a.headers, signal: a.signal },
    `Approval ${a.approvalId} of run ${a.runId} was already answered`,
  );
  return result ?? stillPending(paused, a.runId, a.approvalId);
}

function decisionOf(approvalId: string, answer: ApprovalAnswer): ApprovalDecision {
  return { approvalId, approved: answer.approved, ...(answer.reason !== undefined ? { reason: answer.reason } : {}) };
}

/**
 * Prepares the agent call again from the run's `run.started` (same input, same options), records
 * `decisions` through the run's actor and continues the run; null while other calls still wait.
 */
async function continuePausedRun(
  runs: AgentRuns,
  c: { agent: Agent; runId: string; paused: PausedRun; decisions: ApprovalDecision[]; headers: Record<string, string>; signal?: AbortSignal },
  conflict: string,
): Promise<TextOutcome | null> {
  const { paused } = c;
  const options = paused.started.options as unknown as ResolvedCallOptions;
  const prepared = await runs.prepare({ agent: c.agent, input: paused.started.input as string, options, headers: c.headers, runId: c.runId, signal: c.signal });
  const run = runs.pausedRun(prepared, paused.started);
  try {
    return await continueText(run, prepared, c.decisions, { tail: paused.tail, decisions: [...paused.decisions, ...c.decisions], approvals: paused.approvals }, options.output, c.signal);
  } catch (err) {
    // another request decided first (both read the stream before either wrote; on a shared store,
    // another node may have written its decision between our read and our append)
    if (err instanceof EventRejectedError || err instanceof StreamConflictError) throw new AppError('CONFLICT', conflict);
    throw err;
  }
}

/** The workflow step that started a run (`andAgent`), as its `run.started` metadata records it. */
function workflowOrigin(started: AgentRunStarted): { workflowId: string; executionId: string; stepId: string } | undefined {
  const m = started.metadata ?? {};
  const { workflowId, executionId, stepId } = m;
  return typeof workflowId === 'string' && typeof executionId === 'string' && typeof stepId === 'string' ? { workflowId, executionId, stepId } : undefined;
}

/**
 * Decides every call a paused run still waits for (an `andAgent` step's resume data is one decision
 * for its run) and continues the run; answers as `/text` would.
 */
export async function decideWaitingRun(runs: AgentRuns, agent: Agent, runId: string, answer: ApprovalAnswer, signal?: AbortSignal): Promise<TextOutcome> {
  const paused = await readWaitingRun(runs.deps.host.log, agent.id, runId);
  const decided = new Set(paused.decisions.map((d) => d.approvalId));
  const decisions = paused.approvals.filter((p) => !decided.has(p.approvalId)).map((p) => decisionOf(p.approvalId, answer));
  const result = await continuePausedRun(runs, { agent, runId, paused, decisions, headers: {}, signal }, `Run ${runId} was already answered`);
  // every pending call was decided here: null (others pending) cannot happen
  if (result === null) throw new AppError('CONFLICT', `Run ${runId} is still waiting for approvals`);
  return result;
}

/** A `/chat` request that answers a paused run: the run and the decisions its messages carry. */
export interface ChatContinuation {
  started: AgentRunStarted;
  decisions: ApprovalDecision[];
}

type UiPart = { type?: unknown; state?: unknown; approval?: { id?: unknown; approved?: unknown; reason?: unknown } };

/**
 * The paused run a `/chat` request continues: its last assistant message names the run
 * (`metadata.runId`, set when the run paused) and carries `addToolApprovalResponse`'s decisions
 * (tool parts in state `approval-responded`) for calls that run still waits for; decisions it has
 * already recorded (given through the approvals route, or by an earlier request) are left out.
 * Anything else is an ordinary new chat run (the SDK then handles whatever the messages hold).
 */
export async function findChatContinuation(log: EventLog, agentId: string, input: unknown): Promise<ChatContinuation | undefined> {
  if (!Array.isArray(input)) return undefined;
  const last = [...input].reverse().find((m) => (m as { role?: unknown }).role === 'assistant') as { metadata?: { runId?: unknown }; parts?: UiPart[] } | undefined;
  const runId = last?.metadata?.runId;
  if (typeof runId !== 'string' || !Array.isArray(last?.parts)) return undefined;
  const answers: ApprovalDecision[] = [];
  for (const p of last.parts) {
    if (p.state !== 'approval-responded' || typeof p.approval?.id !== 'string' || typeof p.approval.approved !== 'boolean') continue;
    const d: ApprovalDecision = { approvalId: p.approval.id, approved: p.approval.approved };
    if (typeof p.approval.reason === 'string') d.reason = p.approval.reason;
    answers.push(d);
  }
  if (answers.length === 0) return undefined;
  let paused: PausedRun;
  try {
    // not the first answer's check: a client may carry again a decision another request recorded already
    paused = await readWaitingRun(log, agentId, runId);
  } catch {
    return undefined;
  }
  const decided = new Set(paused.decisions.map((d) => d.approvalId));
  const waiting = new Set(paused.approvals.map((a) => a.approvalId).filter((id) => !decided.has(id)));
  const decisions = answers.filter((d) => waiting.has(d.approvalId));
  return decisions.length > 0 ? { started: paused.started, decisions } : undefined;
}
