/**
 * The `text` operation (POST /agents/:id/text), its use for sub-agent delegation without a stream,
 * and for workflow steps (operationType `workflow-step`): one `generateText` call with the tool loop
 * (`stopWhen: stepCountIs(maxSteps)`), recorded as one run. The response sums usage over every step
 * and lists every step's tool calls and results (docs/api-reference.md "Generation options"); a tool that threw is listed among the
 * results as a `tool-error` entry with its message, so a client sees why the answer lacks its output.
 * A run whose model calls a tool needing approval pauses (`status: "awaiting-approval"`);
 * `continueText` continues it with the decisions (approvals.ts reads them from the log).
 */
import type { ModelMessage, ToolSet, GenerateTextResult } from 'ai';
import { aiSdk } from '../kernel/ai-sdk.js';
import type { AgentOperationType, AgentRunUsage, ApprovalDecision, PendingApproval } from '../../machines/agent-run.machine.js';
import { callSettings, toolLoopSettings, type AgentRuns } from './agent-runs.js';
import type { PreparedCall } from './prepare-call.js';
import { pendingApprovalsOfStep } from './approval-parts.js';
import { endRunOnError, errorMessage, failRun, toRunUsage, type AgentRun } from './run-session.js';
import { objectSchemaIssues, planObjectSchema, schemaMismatchMessage, type ObjectSchemaPlan } from './object-schema.js';

interface TextResponse {
  text: string;
  usage: AgentRunUsage;
  finishReason: string;
  toolCalls: Array<{ type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }>;
  /** every step's tool outcomes in call order: a result, or the tool's error as the SDK's `tool-error` part has it */
  toolResults: Array<ToolResultEntry>;
  feedback: null;
  output?: unknown;
}

export interface TextRunOptions {
  operationType?: AgentOperationType;
  metadata?: Record<string, unknown>;
  /** the caller's trace (a workflow step's); default: the parent run's, else the run's own */
  traceId?: string;
  /** structured output: `options.output` of the request, or a workflow step's schema (any root) */
  output?: { type: 'text' } | { type: 'object'; schema: Record<string, unknown> };
}

type ToolResultEntry =
  { type: 'tool-result'; toolCallId: string; toolName: string; input: unknown; output: unknown } | { type: 'tool-error'; toolCallId: string; toolName: string; input: unknown; error: string };

type AnyResult = GenerateTextResult<ToolSet, any>;

function toTextResponse(result: AnyResult, usage: AgentRunUsage): TextResponse {
  const toolCalls: TextResponse['toolCalls'] = [];
  const toolResults: TextResponse['toolResults'] = [];
  for (const step of result.steps) {
    for (const c of step.toolCalls) toolCalls.push({ type: 'tool-call', toolCallId: c.toolCallId, toolName: c.toolName, input: c.input });
    // the step's content holds results and errors in the order the SDK settled the calls (call order)
    for (const part of step.content) {
      if (part.type === 'tool-result') toolResults.push({ type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, output: part.output });
      else if (part.type === 'tool-error') toolResults.push({ type: 'tool-error', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, error: errorMessage(part.error) });
    }
  }
  return { text: result.text, usage, finishReason: result.finishReason, toolCalls, toolResults, feedback: null };
}

/** The answer of a run that stopped at tool calls needing approval (200, `status: "awaiting-approval"`). */
export interface AwaitingApprovalResponse {
  status: 'awaiting-approval';
  runId: string;
  pendingApprovals: PendingApproval[];
  text: string;
  usage: AgentRunUsage;
  toolCalls: TextResponse['toolCalls'];
  toolResults: TextResponse['toolResults'];
}

export type TextOutcome = TextResponse | AwaitingApprovalResponse;

export const isAwaitingApproval = (r: unknown): r is AwaitingApprovalResponse => (r as { status?: unknown } | null)?.status === 'awaiting-approval';

function pendingApprovalsOf(result: AnyResult): PendingApproval[] {
  return pendingApprovalsOfStep(result.steps.at(-1));
}

/**
 * How a continued run starts: the model messages recorded when it paused (`tail`, everything after
 * the prompt) and the decisions; the SDK runs approved calls and reports denied ones to the model.
 */
export interface Continuation {
  tail: ModelMessage[];
  decisions: ApprovalDecision[];
  /** the paused calls, for the response's tool results */
  approvals: PendingApproval[];
}

export async function runText(runs: AgentRuns, prepared: PreparedCall, input: unknown, signal: AbortSignal | undefined, opts: TextRunOptions = {}): Promise<TextOutcome> {
  const run = runs.newRun(prepared, opts.operationType ?? 'text', input, { metadata: opts.metadata, traceId: opts.traceId });
  const unbind = runs.bindDisconnect(signal, run, prepared.options);
  try {
    return await run.start(textExecutor(prepared, opts.output, undefined));
  } finally {
    unbind();
  }
}

/** Records decisions of a paused run (all in one append); when they were the last, continues the run and answers as `/text` would. Null while others are pending. */
export async function continueText(
  run: AgentRun,
  prepared: PreparedCall,
  decisions: ApprovalDecision[],
  continuation: Continuation,
  output: TextRunOptions['output'],
  signal: AbortSignal | undefined,
): Promise<TextOutcome | null> {
  const unbind = signal ? bindAbort(signal, run, prepared) : noop;
  try {
    return await run.resume(decisions, textExecutor(prepared, output, continuation));
  } finally {
    unbind();
  }
}

const noop = () => {};
function bindAbort(signal: AbortSignal, run: AgentRun, prepared: PreparedCall): () => void {
  if (prepared.options.onDisconnect === 'continue') return noop;
  const onAbort = () => run.controller.abort(new DOMException('Client disconnected', 'AbortError'));
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** The tool message carrying the decisions (the SDK's `tool-approval-response` parts). */
function approvalResponseMessage(decisions: ApprovalDecision[]): ModelMessage {
  return {
    role: 'tool',
    content: decisions.map((d) => ({ type: 'tool-approval-response' as const, approvalId: d.approvalId, approved: d.approved, ...(d.reason !== undefined ? { reason: d.reason } : {}) })),
  };
}

/** What the SDK did with the decided calls before the model's next step: tool results, and denials as errors. */
function decidedToolResults(result: AnyResult, continuation: Continuation): ToolResultEntry[] {
  const first = result.response.messages[0];
  if (first?.role !== 'tool' || typeof first.content === 'string') return [];
  const input = new Map(continuation.approvals.map((a) => [a.toolCallId, a.args]));
  const out: ToolResultEntry[] = [];
  for (const part of first.content) {
    if (part.type !== 'tool-result') continue;
    const o = part.output as { type: string; value?: unknown; reason?: string };
    const base = { toolCallId: part.toolCallId, toolName: part.toolName, input: input.get(part.toolCallId) };
    if (o.type === 'execution-denied') out.push({ type: 'tool-error', ...base, error: o.reason ? `Tool call denied: ${o.reason}` : 'Tool call denied' });
    else if (o.type === 'error-text' || o.type === 'error-json') out.push({ type: 'tool-error', ...base, error: typeof o.value === 'string' ? o.value : JSON.stringify(o.value) });
    else out.push({ type: 'tool-result', ...base, output: o.value });
  }
  return out;
}

function textExecutor(prepared: PreparedCall, output: TextRunOptions['output'], continuation: Continuation | undefined) {
  const plan: ObjectSchemaPlan | undefined = output?.type === 'object' ? planObjectSchema(output.schema) : undefined;
  // the messages after the prompt when the run continues: what the model said, then the decisions
  const tail = continuation ? [...continuation.tail, approvalResponseMessage(continuation.decisions)] : [];
  return async (run: AgentRun): Promise<TextOutcome> => {
    const memory = run.memory;
    if (!continuation) memory?.input();
    let result: AnyResult;
    try {
      const { generateText, jsonSchema, Output } = aiSdk();
      result = await generateText({
        ...callSettings(prepared),
        ...(tail.length > 0 ? { messages: [...prepared.messages, ...tail] } : {}),
        ...toolLoopSettings(prepared),
        abortSignal: run.controller.signal,
        ...(output ? { output: plan ? Output.object({ schema: jsonSchema(plan.modelSchema as never) }) : Output.text() } : {}),
        onStepFinish: (step) => {
          run.stepFinished(step);
          memory?.step(step);
        },
      });
    } catch (err) {
      return endRunOnError(run, err);
    }
    const usage = toRunUsage(result.totalUsage);
    const approvals = pendingApprovalsOf(result);
    if (approvals.length > 0) {
      await run.awaitApproval(approvals, [...tail, ...result.response.messages]);
      const partial = toTextResponse(result, usage);
      if (continuation) partial.toolResults.unshift(...decidedToolResults(result, continuation));
      return { status: 'awaiting-approval', runId: run.runId, pendingApprovals: approvals, text: result.text, usage, toolCalls: partial.toolCalls, toolResults: partial.toolResults };
    }
    let structured: unknown;
    if (output) {
      try {
        structured = plan ? plan.unwrap(result.output) : result.output;
      } catch (err) {
        return failRun(run, err);
      }
      const issues = output.type === 'object' ? objectSchemaIssues(output.schema, structured) : undefined;
      if (issues !== undefined) return failRun(run, schemaMismatchMessage(issues));
    }
    await run.finish({ steps: result.steps, text: result.text, output: structured, usage, finishReason: result.finishReason });
    memory?.finish(result.response.messages);
    const response = toTextResponse(result, usage);
    if (continuation) response.toolResults.unshift(...decidedToolResults(result, continuation));
    if (output) response.output = structured;
    return response;
  };
}
