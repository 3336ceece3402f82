/**
 * Observability routes (docs/api-reference.md "Logs, observability and updates", "WebSocket feeds"), all of auth class `console`: status, traces (list, by id), spans,
 * their log records, the log-record query, and `WS /ws/observability` (also `/ws/observability/<anything>`), whose
 * clients subscribe to the uWS topics of their entity filter (src/observability/ws-topics.ts).
 */
import { z } from 'zod';
import { AppError } from '../errors.js';
import { isInvalidWsJson, type RouteDef, type WsRouteDef } from '../contract/routes.js';
import type { TraceStore } from './traces-store.js';
import type { LogRecordStore } from './log-records.js';
import { buildTree, type Span } from '../kernel/span-types.js';
import { topicsFor, type SlowClientGuard } from './ws-topics.js';
import type { StorageStats } from '../log/capabilities.js';
import type { StoreStatus } from '../log/store-health.js';
import type { HistoryView } from './history-size.js';
import { obsLogsQuerySchema, observabilityWsQuerySchema, tracesQuerySchema, type ObsLogsQuery } from './query-schemas.js';

export interface ObservabilityRouteDeps {
  store: TraceStore;
  logs: LogRecordStore;
  /** where spans are exported besides the local store, for the status message */
  exportTarget?: string;
  /** closes clients that fall behind */
  guard: SlowClientGuard;
  /** the figures of the storage under the log, when it has some (LevelDB) */
  logStats?: () => StorageStats;
  /** the log's durable head */
  logHead: () => number;
  /** on a store several nodes write: what this node read back of the others' records */
  readBack?: () => { reads: number; records: number; skipped: number };
  /** the health of the store under the log: `{ kind, state, since, reason? }` (the console's indicator reads this shape) */
  storeStatus: () => StoreStatus;
  /** this node's id, the store under its log and, on a shared store, what it owns */
  node: { nodeId: string; store: 'leveldb' | 'postgres' | 'memory'; owns?: () => Promise<{ executions: number; agentRuns: number }> };
  /** on a store whose nodes share read models: whether this node folds them now (else another does) */
  foldsSharedReadModels?: () => boolean;
  /** whether this node's store holds every span (else another node's does, and the trace routes are read there) */
  holdsAllSpans: () => boolean;
  /** `/ws/observability` clients opened (+1) and closed (-1) on this node */
  watchers: (delta: number) => void;
  /** executions and agent runs in flight */
  live: () => unknown;
  /** the unfinished executions of this node that nothing would move (absent: no workflows module) */
  stuckExecutions?: () => Promise<StuckExecutionView[]>;
  /** how much history the node keeps, and the retention policy in effect (absent: no domain reports it) */
  history?: () => Promise<HistoryView>;
}

/** One stuck execution as the status shows it (the workflows module decides which: src/workflows/stuck-executions.ts). */
export interface StuckExecutionView {
  executionId: string;
  workflowId: string;
  status: string;
  since: string;
  reason: string;
}

const STORE_NAMES = { leveldb: 'Event log (LevelDB)', postgres: 'Event log (PostgreSQL, shared by the nodes)', memory: 'Event log (in memory)' } as const;

/** What the status shows of the event log and the process: enough to watch memory and storage from outside. */
function runtimeStatus(deps: ObservabilityRouteDeps) {
  const s = deps.logStats?.();
  const m = process.memoryUsage();
  return {
    eventLog: {
      head: deps.logHead(),
      ...(s ? { cachedStreams: s.cachedStreams, storageMemoryBytes: s.storageMemoryBytes, tableFiles: s.tableFiles, batches: s.batches } : {}),
      ...(deps.readBack ? { otherNodesRecords: deps.readBack() } : {}),
    },
    live: deps.live(),
    process: { rssBytes: m.rss, heapUsedBytes: m.heapUsed, heapTotalBytes: m.heapTotal, externalBytes: m.external, uptimeSeconds: Math.round(process.uptime()) },
  };
}

const clone = <T>(v: T): T => structuredClone(v);

function traceView(store: TraceStore, traceId: string) {
  const spans = store.traceSpans(traceId).map(clone);
  return { traceId, spans, tree: buildTree(spans), spanCount: spans.length };
}

const spanSchema = z.object({ traceId: z.string(), spanId: z.string(), parentSpanId: z.string().optional(), name: z.string() }).catchall(z.unknown());
const traceSchema = z.object({ traceId: z.string(), spans: z.array(spanSchema), tree: z.array(z.unknown()), spanCount: z.number() });
const logRecordSchema = z.object({ timestamp: z.string(), traceId: z.string().optional(), spanId: z.string().optional(), body: z.unknown() }).catchall(z.unknown());

export function observabilityRoutes(deps: ObservabilityRouteDeps): { routes: RouteDef[]; wsRoutes: WsRouteDef[] } {
  const { store, logs } = deps;
  const route = (r: Omit<RouteDef, 'auth' | 'tags' | 'method'>): RouteDef => ({ method: 'GET', auth: 'console', tags: ['Observability'], ...r });
  const mustTrace = (traceId: string) => {
    if (!store.getTrace(traceId)) throw new AppError('NOT_FOUND', 'Trace not found');
  };
  const mustSpan = (spanId: string): Span => {
    const s = store.getSpan(spanId);
    if (!s) throw new AppError('NOT_FOUND', 'Span not found');
    return s;
  };
  // log lines are this node's own; whether their trace or span exists is known here only where every span is
  const logsOfTrace = (traceId: string) => (deps.holdsAllSpans() ? mustTrace(traceId) : undefined);
  const logsOfSpan = (spanId: string) => (deps.holdsAllSpans() ? mustSpan(spanId) : undefined);

  const routes: RouteDef[] = [
    route({
      path: '/observability/status',
      summary:
        "Observability status: storage, counts, WebSocket availability, the event store's health, the event log (head, LevelDB memory, table files), process memory, and the history kept (executions, agent runs, records, bytes) with the retention policy in effect",
      handler: async () => ({
        kind: 'json',
        data: {
          enabled: true,
          storage: 'memory',
          storageAdapter: 'InMemoryObservabilityStore',
          storagePersistent: false,
          storageDisplayName: 'In-memory (rebuilt from the event log)',
          storageDescription: 'Spans are a projection of the durable event log, rebuilt on boot (last 10,000 spans); log records are the last 50,000 server log entries, kept in memory.',
          websocket: true,
          traceCount: store.traceCount,
          spanCount: store.spanCount,
          logCount: logs.size,
          resumableStream: { enabled: true, store: 'event-log', storeDisplayName: STORE_NAMES[deps.node.store] },
          store: deps.storeStatus(),
          // what this node owns is read from the store: unknown while the store is failed
          node: {
            id: deps.node.nodeId,
            store: deps.node.store,
            ...(deps.foldsSharedReadModels ? { sharedReadModels: deps.foldsSharedReadModels() ? 'folds' : 'reads' } : {}),
            ...(deps.node.owns
              ? await deps.node.owns().then(
                  (owns) => ({ owns }),
                  () => ({}),
                )
              : {}),
          },
          ...runtimeStatus(deps),
          // should always be empty; unknown (absent) while the store is failed
          ...(deps.stuckExecutions
            ? await deps.stuckExecutions().then(
                (stuckExecutions) => ({ stuckExecutions }),
                () => ({}),
              )
            : {}),
          ...(deps.history ? { history: await deps.history() } : {}),
          message: deps.exportTarget ? `Observability is enabled with local storage; spans are also exported over OTLP to ${deps.exportTarget}` : 'Observability is enabled with local storage',
        },
      }),
    }),
    route({
      path: '/observability/traces',
      summary: 'Traces, newest first, optionally of one agent or workflow',
      query: tracesQuerySchema,
      readFrom: 'read-models-leader',
      response: z.object({ traces: z.array(traceSchema), count: z.number() }),
      handler: (ctx) => {
        const q = ctx.query as z.output<typeof tracesQuerySchema>;
        const traces = store.listTraces({ entityType: q.entityType, entityId: q.entityId }, q.limit).map((t) => traceView(store, t.traceId));
        return { kind: 'json', data: { traces, count: traces.length } };
      },
    }),
    route({
      path: '/observability/traces/:traceId',
      summary: 'One trace: its spans and their tree',
      readFrom: 'read-models-leader',
      response: traceSchema,
      handler: (ctx) => {
        mustTrace(ctx.params.traceId);
        return { kind: 'json', data: traceView(store, ctx.params.traceId) };
      },
    }),
    route({
      path: '/observability/spans/:spanId',
      summary: 'One span',
      readFrom: 'read-models-leader',
      response: spanSchema,
      handler: (ctx) => ({ kind: 'json', data: clone(mustSpan(ctx.params.spanId)) }),
    }),
    route({
      path: '/observability/traces/:traceId/logs',
      summary: 'Log records of a trace, oldest first',
      response: z.object({ traceId: z.string(), logs: z.array(logRecordSchema), count: z.number() }),
      handler: (ctx) => {
        logsOfTrace(ctx.params.traceId);
        const list = logs.ofTrace(ctx.params.traceId);
        return { kind: 'json', data: { traceId: ctx.params.traceId, logs: list, count: list.length } };
      },
    }),
    route({
      path: '/observability/spans/:spanId/logs',
      summary: 'Log records of a span, oldest first',
      response: z.object({ spanId: z.string(), logs: z.array(logRecordSchema), count: z.number() }),
      handler: (ctx) => {
        logsOfSpan(ctx.params.spanId);
        const list = logs.ofSpan(ctx.params.spanId);
        return { kind: 'json', data: { spanId: ctx.params.spanId, logs: list, count: list.length } };
      },
    }),
    route({
      path: '/observability/logs',
      summary: 'Query log records by trace, span, severity (exact) and time (inclusive)',
      query: obsLogsQuerySchema,
      response: z.object({ logs: z.array(logRecordSchema), count: z.number(), filter: z.record(z.string(), z.unknown()) }),
      handler: (ctx) => {
        const q = ctx.query as ObsLogsQuery;
        const list = logs.query(q, q.limit);
        const filter: Record<string, unknown> = {};
        for (const k of ['traceId', 'spanId', 'severityNumber', 'severityText'] as const) if (q[k] !== undefined) filter[k] = q[k];
        if (q.startTime !== undefined) filter.startTime = new Date(q.startTime).toISOString();
        if (q.endTime !== undefined) filter.endTime = new Date(q.endTime).toISOString();
        filter.limit = q.limit;
        return { kind: 'json', data: { logs: list, count: list.length, filter } };
      },
    }),
  ];

  const ws: WsRouteDef = {
    path: '/ws/observability',
    prefix: true,
    auth: 'console',
    summary: 'Live spans and log records, optionally filtered by entity (entityType, entityId or agentId)',
    query: observabilityWsQuerySchema,
    open(client, { query }) {
      const q = query as z.output<typeof observabilityWsQuerySchema>;
      const entityId = q.entityId ?? q.agentId;
      const entityType = q.entityType;
      for (const topic of topicsFor({ entityType, entityId })) client.subscribe(topic);
      deps.guard.add(client);
      deps.watchers(1);
      client.send({
        type: 'CONNECTION_SUCCESS',
        success: true,
        data: {
          message: entityId !== undefined ? `Connected to observability stream (filtered by ${entityType ?? 'entity'}: ${entityId})` : 'Connected to observability stream',
          ...(entityId !== undefined ? { entityId } : {}),
          ...(entityType !== undefined ? { entityType } : {}),
          timestamp: Date.now(),
        },
      });
    },
    message(client, message) {
      if (isInvalidWsJson(message)) {
        client.send({ type: 'ERROR', success: false, error: 'Invalid message format' });
        return;
      }
      const type = message && typeof message === 'object' ? (message as { type?: unknown }).type : undefined;
      if (type === 'PING') client.send({ type: 'PONG', success: true });
      else if (type === 'SUBSCRIBE') client.send({ type: 'SUBSCRIPTION_SUCCESS', success: true, data: { subscribed: true } });
    },
    close(client) {
      deps.guard.remove(client);
      deps.watchers(-1);
    },
  };

  return { routes, wsRoutes: [ws] };
}
