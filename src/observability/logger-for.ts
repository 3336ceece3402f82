/**
 * The agreed correlation keys of server logs, and the helper other modules use to get a child logger for an
 * execution, a step, an agent run or a tool call. Whatever a child logger is bound with ends up on every entry it
 * writes, so `/api/logs` filters, `/ws/logs` and the observability log records (linked to the trace and span of
 * that execution or run) all find it.
 *
 * Keys: `component` (e.g. `workflows`, `agents`), `workflowId`, `executionId`, `parentExecutionId` (a nested
 * workflow's parent), `stepId`, `agentId`, `runId` (agent run), `conversationId`, `userId`, `toolCallId`.
 * `logger.child({...})` with these keys is equivalent; `loggerFor` only drops undefined values.
 */
import type { Logger } from 'pino';

export interface LogBindings {
  component?: string;
  workflowId?: string;
  executionId?: string;
  parentExecutionId?: string;
  stepId?: string;
  agentId?: string;
  runId?: string;
  conversationId?: string;
  userId?: string;
  toolCallId?: string;
  [key: string]: unknown;
}

export const CORRELATION_KEYS = [
  'component',
  'workflowId',
  'executionId',
  'parentExecutionId',
  'stepId',
  'agentId',
  'runId',
  'conversationId',
  'userId',
  'toolCallId',
] as const;

/** A child logger whose entries carry `bindings` (undefined values left out). */
export function loggerFor(logger: Logger, bindings: LogBindings): Logger {
  const clean: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(bindings)) if (v !== undefined && v !== null) clean[k] = v;
  return logger.child(clean);
}
