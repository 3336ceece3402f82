/**
 * The `text` operation (POST /agents/:id/text), its use for sub-agent delegation without a stream,
 * and for workflow steps (operationType `workflow-step`): one `generateText` call with the tool loop
 * (`stopWhen: stepCountIs(maxSteps)`), recorded as one run. The response sums usage over every step
 * and lists every step's tool calls and results (decisions.md §3); a tool that threw is listed among the
 * results as a `tool-error` entry with its message, so a client sees why the answer lacks its output.
 */
import type { ToolSet, GenerateTextResult } from 'ai';
import { aiSdk } from './ai-sdk.js';
import type { AgentOperationType, AgentRunUsage } from '../../machines/agent-run.machine.js';
import { callSettings, toolLoopSettings, type AgentRuns } from './agent-runs.js';
import type { PreparedCall } from './prepare-call.js';
import { endRunOnError, errorMessage, failRun, toRunUsage } from './run-session.js';
import { objectSchemaIssues, planObjectSchema, schemaMismatchMessage, type ObjectSchemaPlan } from './object-schema.js';

export interface TextResponse {
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

export type ToolResultEntry =
  | { type: 'tool-result'; toolCallId: string; toolName: string; input: unknown; output: unknown }
  | { type: 'tool-error'; toolCallId: string; toolName: string; input: unknown; error: string };

type AnyResult = GenerateTextResult<ToolSet, any>;

export function toTextResponse(result: AnyResult, usage: AgentRunUsage): TextResponse {
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

export async function runText(runs: AgentRuns, prepared: PreparedCall, input: unknown, signal: AbortSignal | undefined, opts: TextRunOptions = {}): Promise<TextResponse> {
  const run = runs.newRun(prepared, opts.operationType ?? 'text', input, { metadata: opts.metadata, traceId: opts.traceId });
  const unbind = runs.bindDisconnect(signal, run, prepared.options);
  const memory = run.memory;
  const output = opts.output;
  const plan: ObjectSchemaPlan | undefined = output?.type === 'object' ? planObjectSchema(output.schema) : undefined;
  try {
    return await run.start(async (run) => {
      memory?.input();
      let result: AnyResult;
      try {
        const { generateText, jsonSchema, Output } = aiSdk();
        result = await generateText({
          ...callSettings(prepared),
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
      if (output) response.output = structured;
      return response;
    });
  } finally {
    unbind();
  }
}
