/**
 * Server logs over HTTP and WebSocket (docs/api-reference.md "Logs, observability and updates", "WebSocket feeds", "Limits and paging"): `GET /api/logs` (filters over the last 1000
 * captured entries; the most recent matches, oldest first) and `WS /ws/logs` (an `initial` batch, then one
 * `update` per new matching entry; `updateFilter` replaces the filter; `since`/`until` apply to live entries too).
 */
import { z } from 'zod';
import { isInvalidWsJson, type RouteDef, type WsRouteDef } from '../contract/routes.js';
import { formatIssues } from '../errors.js';
import type { LogCapture } from './log-capture.js';
import type { LogsFeed, SlowClientGuard } from './ws-topics.js';
import { logFilterOf, logQueryEcho, logQuerySchema, type LogQuery } from './query-schemas.js';

export interface LogsRouteDeps {
  capture: LogCapture;
  feed: LogsFeed;
  /** closes clients that fall behind */
  guard: SlowClientGuard;
}

const logEntrySchema = z
  .object({
    timestamp: z.string(),
    level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']),
    msg: z.string(),
    component: z.string().optional(),
    agentId: z.string().optional(),
    conversationId: z.string().optional(),
    workflowId: z.string().optional(),
    executionId: z.string().optional(),
    userId: z.string().optional(),
    error: z.object({ type: z.string(), message: z.string(), stack: z.string().optional() }).optional(),
  })
  .catchall(z.unknown());

export function logsRoutes(deps: LogsRouteDeps): { routes: RouteDef[]; wsRoutes: WsRouteDef[] } {
  const getLogs: RouteDef = {
    method: 'GET',
    path: '/api/logs',
    auth: 'management',
    summary: 'Query captured server logs (last 1000 entries) by level, entity ids and time',
    tags: ['Logs'],
    query: logQuerySchema,
    response: z.array(logEntrySchema),
    handler: (ctx) => {
      const q = ctx.query as LogQuery;
      const data = deps.capture.query(logFilterOf(q), q.limit).map((l) => l.entry);
      return { kind: 'json', data, extra: { total: data.length, query: logQueryEcho(q) } };
    },
  };

  const wsLogs: WsRouteDef = {
    path: '/ws/logs',
    auth: 'management',
    summary: 'Live server logs: an initial batch, then updates; send {type:"updateFilter", filter} to change the filter',
    query: logQuerySchema,
    open(client, { query }) {
      const q = query as LogQuery;
      const filter = logFilterOf(q);
      const logs = deps.capture.query(filter, q.limit).map((l) => l.entry);
      client.send({ type: 'initial', logs, timestamp: new Date().toISOString() });
      deps.feed.add(client, filter);
      deps.guard.add(client);
    },
    message(client, message) {
      if (isInvalidWsJson(message) || !message || typeof message !== 'object') {
        client.send({ type: 'ERROR', success: false, error: 'Invalid message format' });
        return;
      }
      const m = message as { type?: unknown; filter?: unknown };
      if (m.type !== 'updateFilter') return;
      const parsed = logQuerySchema.safeParse(stringValues(m.filter));
      if (!parsed.success) {
        client.send({ type: 'ERROR', success: false, error: `Invalid request: ${formatIssues(parsed.error.issues, 'filter')}` });
        return;
      }
      deps.feed.setFilter(client, logFilterOf(parsed.data));
    },
    close(client) {
      deps.feed.remove(client);
      deps.guard.remove(client);
    },
  };

  return { routes: [getLogs], wsRoutes: [wsLogs] };
}

/** The filter object of `updateFilter` with values as the query would carry them (numbers → text). */
function stringValues(filter: unknown): Record<string, unknown> {
  if (!filter || typeof filter !== 'object' || Array.isArray(filter)) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(filter)) if (v !== undefined && v !== null) out[k] = typeof v === 'number' || typeof v === 'boolean' ? String(v) : v;
  return out;
}
