/**
 * Query schemas of the logs and observability routes and WebSocket handshakes (docs/api-reference.md "Logs, observability and updates", "WebSocket feeds", "Limits and paging"):
 * values arrive as text, numbers are parsed, an invalid value of a known parameter is a 400 naming it, unknown
 * parameters are ignored, a `limit` over the maximum is lowered to it.
 */
import { z } from 'zod';
import { LEVELS, type LevelName, type LogFilter } from './log-entry.js';

const ISO_RE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/** An ISO 8601 timestamp → epoch ms. */
const isoTime = z
  .string()
  .trim()
  .refine((s) => ISO_RE.test(s) && !Number.isNaN(Date.parse(s)), { message: 'must be an ISO 8601 timestamp' })
  .transform((s) => Date.parse(s));

/** `limit`: an integer >= 1 (else 400), lowered to `max`, `def` when absent. */
const limitParam = (def: number, max: number) =>
  z
    .string()
    .trim()
    .refine((s) => /^\d+$/.test(s) && Number(s) >= 1, { message: 'must be an integer >= 1' })
    .transform((s) => Math.min(Number(s), max))
    .optional()
    .transform((v) => v ?? def);

const intParam = z
  .string()
  .trim()
  .refine((s) => /^-?\d+$/.test(s), { message: 'must be an integer' })
  .transform(Number);

const levelParam = z
  .string()
  .trim()
  .transform((s) => s.toLowerCase())
  .refine((s): s is LevelName => (LEVELS as readonly string[]).includes(s), { message: `must be one of ${LEVELS.join(', ')}` })
  .transform((s) => s);

const idParam = z.string();

/** `/api/logs`, `/ws/logs` and the `updateFilter` message. */
export const logQuerySchema = z.object({
  level: levelParam.optional(),
  agentId: idParam.optional(),
  conversationId: idParam.optional(),
  workflowId: idParam.optional(),
  executionId: idParam.optional(),
  since: isoTime.optional(),
  until: isoTime.optional(),
  limit: limitParam(100, 1000),
});
export type LogQuery = z.output<typeof logQuerySchema>;

/** The filter part of a parsed log query. */
export function logFilterOf(q: LogQuery): LogFilter {
  const f: LogFilter = {};
  if (q.level) f.level = q.level;
  if (q.agentId !== undefined) f.agentId = q.agentId;
  if (q.conversationId !== undefined) f.conversationId = q.conversationId;
  if (q.workflowId !== undefined) f.workflowId = q.workflowId;
  if (q.executionId !== undefined) f.executionId = q.executionId;
  if (q.since !== undefined) f.since = q.since;
  if (q.until !== undefined) f.until = q.until;
  return f;
}

/** The `query` echo of `/api/logs`: the filters as given (times as ISO), plus the limit used. */
export function logQueryEcho(q: LogQuery): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['level', 'agentId', 'conversationId', 'workflowId', 'executionId'] as const) if (q[k] !== undefined) out[k] = q[k];
  if (q.since !== undefined) out.since = new Date(q.since).toISOString();
  if (q.until !== undefined) out.until = new Date(q.until).toISOString();
  out.limit = q.limit;
  return out;
}

export const tracesQuerySchema = z.object({
  entityType: z.enum(['agent', 'workflow'], { message: 'must be one of agent, workflow' }).optional(),
  entityId: idParam.optional(),
  limit: limitParam(100, 1000),
});

export const obsLogsQuerySchema = z.object({
  traceId: idParam.optional(),
  spanId: idParam.optional(),
  severityNumber: intParam.optional(),
  severityText: z.string().trim().min(1, { message: 'must not be empty' }).optional(),
  startTime: isoTime.optional(),
  endTime: isoTime.optional(),
  limit: limitParam(100, 1000),
});
export type ObsLogsQuery = z.output<typeof obsLogsQuerySchema>;

/** `/ws/observability` handshake: entity filter (`agentId` is an alias of `entityId`) and console credentials. */
export const observabilityWsQuerySchema = z.object({
  entityType: z.enum(['agent', 'workflow'], { message: 'must be one of agent, workflow' }).optional(),
  entityId: idParam.optional(),
  agentId: idParam.optional(),
  dev: z.string().optional(),
  key: z.string().optional(),
});
