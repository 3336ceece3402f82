/**
 * The agreed correlation keys of server logs, and the helper other modules use to get a child logger for an
 * execution, a step, an agent run or a tool call. Whatever a child logger is bound with ends up on every entry it
 * writes, so `/api/logs` filters, `/ws/logs` and the observability log records (linked to the trace and span of
 * that execution or run) all find it.
 *
 * Keys: `component` (e.g. `workflows`, `agents`), `workflowId`, `executionId`, `parentExecutionId` (a nested
 * workflow's parent), `stepId`, `agentId`, `runId` (agent run), `conversationId`, `userId`, `toolCallId`.
 *
 * pino writes a child's bindings after its parent's without merging them, so binding a key again (a step's logger
 * made from its execution's, both with `stepId`) writes that key twice in every line. `loggerFor` therefore never
 * stacks: a logger it made remembers its base and bindings, and a further `loggerFor` on it makes one child of that
 * base with the merged bindings (later values win). Keys the base itself already binds to the same value are left
 * out. Use it rather than `logger.child` wherever a logger may be narrowed again.
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

/** The base and merged bindings of each logger `loggerFor` made. */
const derived = new WeakMap<Logger, { base: Logger; bindings: Record<string, unknown> }>();

/** A child logger whose entries carry `bindings` (undefined values left out), each key once. */
export function loggerFor(logger: Logger, bindings: LogBindings): Logger {
  const from = derived.get(logger);
  const base = from?.base ?? logger;
  const merged: Record<string, unknown> = { ...from?.bindings };
  for (const [k, v] of Object.entries(bindings)) if (v !== undefined && v !== null) merged[k] = v;
  const own = base.bindings();
  for (const k of Object.keys(merged)) if (own[k] === merged[k]) delete merged[k];
  const child = base.child(merged);
  derived.set(child, { base, bindings: merged });
  return child;
}
