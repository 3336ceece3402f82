/**
 * Direct tool execution (`POST /tools/:name/execute`), recorded in the log like every other effect:
 * one `tool:<uuid>` stream per run with `tool.started` {toolName, input, userId?, conversationId?},
 * then `tool.completed` {output, durationMs} or `tool.failed` {message, durationMs}.
 *
 * Decide, append, apply: the tool runs only once `tool.started` is durable, and the caller gets its
 * answer only once the terminal record is durable (invariant 1). The stream has one writer (this
 * call), and each append states the stream sequence it expects. A result that is not JSON cannot be
 * recorded or answered, so it counts as a failure of the tool.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { EventLog } from '../log/types.js';
import type { Tool, ToolExecuteOptions } from '../kernel/define-tool.js';

const TOOL_STREAM_PREFIX = 'tool:';
export const TOOL_STARTED = 'tool.started';
export const TOOL_COMPLETED = 'tool.completed';
export const TOOL_FAILED = 'tool.failed';

interface ToolStartedData {
  toolName: string;
  input: unknown;
  userId?: string;
  conversationId?: string;
}
interface ToolCompletedData {
  output: unknown;
  durationMs: number;
}
interface ToolFailedData {
  message: string;
  durationMs: number;
}

export interface DirectToolCall {
  /** already validated against the tool's parameters */
  input: unknown;
  context: Record<string, unknown>;
  userId?: string;
  conversationId?: string;
  signal: AbortSignal;
}

export interface DirectToolResult {
  toolName: string;
  result: unknown;
  executionTime: number;
  timestamp: string;
  runId: string;
}

export interface ToolRunDeps {
  log: EventLog;
  /** where a failing tool is reported (warn: the tool's code failed, not the server) */
  logger?: Logger;
  now?: () => number;
  newId?: () => string;
}

export function toolStream(runId: string): string {
  return `${TOOL_STREAM_PREFIX}${runId}`;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

/** The value as JSON would carry it (`undefined` → null); throws when it is not representable. */
function asJson(value: unknown): unknown {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
}

/** Runs the tool and records the run; resolves with the response data, or rejects with an AppError (500). */
export async function runToolDirect(deps: ToolRunDeps, tool: Tool, call: DirectToolCall): Promise<DirectToolResult> {
  const execute = tool.execute;
  if (!execute) throw new AppError('BAD_REQUEST', `Tool ${tool.name} cannot be executed on the server`);
  const now = deps.now ?? Date.now;
  const runId = (deps.newId ?? randomUUID)();
  const stream = toolStream(runId);
  const started: ToolStartedData = { toolName: tool.name, input: call.input };
  if (call.userId !== undefined) started.userId = call.userId;
  if (call.conversationId !== undefined) started.conversationId = call.conversationId;
  await deps.log.append(stream, [{ type: TOOL_STARTED, data: started }], { expectedStreamSeq: 0 });

  const options: ToolExecuteOptions = { context: call.context, signal: call.signal };
  if (call.userId !== undefined) options.userId = call.userId;
  if (call.conversationId !== undefined) options.conversationId = call.conversationId;
  const t0 = now();
  let output: unknown;
  let failure: string | undefined;
  try {
    output = asJson(await execute(call.input, options));
  } catch (err) {
    failure = errorText(err) || `Tool ${tool.name} failed`;
    const ids = {
      toolName: tool.name,
      toolRunId: runId,
      ...(call.userId !== undefined ? { userId: call.userId } : {}),
      ...(call.conversationId !== undefined ? { conversationId: call.conversationId } : {}),
    };
    deps.logger?.warn({ ...ids, err: err instanceof Error ? err : { type: 'Error', message: failure } }, 'tool failed');
  }
  const durationMs = Math.max(0, now() - t0);
  if (failure !== undefined) {
    const data: ToolFailedData = { message: failure, durationMs };
    await deps.log.append(stream, [{ type: TOOL_FAILED, data }], { expectedStreamSeq: 1 });
    throw new AppError('EXECUTION_FAILED', failure);
  }
  const data: ToolCompletedData = { output, durationMs };
  await deps.log.append(stream, [{ type: TOOL_COMPLETED, data }], { expectedStreamSeq: 1 });
  return { toolName: tool.name, result: output, executionTime: durationMs, timestamp: new Date(now()).toISOString(), runId };
}
