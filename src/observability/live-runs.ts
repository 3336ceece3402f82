/**
 * What is in flight right now: executions running (top-level) and agent runs working, as an
 * `@xstate/store` whose one transition, `committed`, is the projection's apply. A projection
 * runner feeds it live records (no catch-up: recovery appends `execution.recovered` for every
 * execution it continues, and interrupted agent runs are closed at boot), and
 * `GET /observability/status` reads its snapshot. Only lifecycle records touch it, so a step costs
 * nothing here.
 */
import { createStore } from '@xstate/store';
import type { LogRecord } from '../log/types.js';
import type { ProjectionDefinition } from '../projections/runner.js';
import { EXECUTION_STREAM_PREFIX, executionIdOf } from '../workflows/events.js';

export interface LiveRun {
  id: string;
  /** the workflow's name or the agent's id */
  name: string;
  /** epoch ms of the record that made it live */
  since: number;
}

export interface LiveRunsContext {
  executions: Readonly<Record<string, LiveRun>>;
  agentRuns: Readonly<Record<string, LiveRun>>;
}

const RUN_PREFIX = 'run:';
const EXECUTION_LIVE = new Set(['execution.started', 'execution.resumed', 'execution.recovered']);
const EXECUTION_DONE = new Set(['execution.suspended', 'execution.completed', 'execution.failed', 'execution.cancelled']);
const RUN_DONE = new Set(['run.finished', 'run.failed', 'run.aborted']);

const without = <T>(map: Readonly<Record<string, T>>, key: string): Record<string, T> => {
  const { [key]: _gone, ...rest } = map;
  return rest;
};

/** The pure transition: the context after `rec` (the same object when `rec` changes nothing). */
export function applyLiveRecord(ctx: LiveRunsContext, rec: LogRecord): LiveRunsContext {
  if (rec.stream.startsWith(EXECUTION_STREAM_PREFIX)) {
    if (rec.stream.indexOf('/', EXECUTION_STREAM_PREFIX.length) >= 0) return ctx; // child executions are part of their parent
    const id = executionIdOf(rec.stream);
    const d = rec.data as { workflowName?: string; parentExecutionId?: string };
    if (EXECUTION_LIVE.has(rec.type) && !d.parentExecutionId && !ctx.executions[id]) {
      return { ...ctx, executions: { ...ctx.executions, [id]: { id, name: d.workflowName ?? '', since: rec.at } } };
    }
    if (EXECUTION_DONE.has(rec.type) && ctx.executions[id]) return { ...ctx, executions: without(ctx.executions, id) };
    return ctx;
  }
  if (rec.stream.startsWith(RUN_PREFIX)) {
    const id = rec.stream.slice(RUN_PREFIX.length);
    if (rec.type === 'run.started') return { ...ctx, agentRuns: { ...ctx.agentRuns, [id]: { id, name: (rec.data as { agentId: string }).agentId, since: rec.at } } };
    if (RUN_DONE.has(rec.type) && ctx.agentRuns[id]) return { ...ctx, agentRuns: without(ctx.agentRuns, id) };
  }
  return ctx;
}

/**
 * The context after a fold's records: what `applyLiveRecord` gives record by record, with each map
 * copied at most once per fold instead of once per record (a start and a completion of the same
 * execution usually share a fold, and every copy costs the size of what is in flight).
 */
export function applyLiveRecords(ctx: LiveRunsContext, records: readonly LogRecord[]): LiveRunsContext {
  let executions: Record<string, LiveRun> | undefined;
  let agentRuns: Record<string, LiveRun> | undefined;
  for (const rec of records) {
    if (rec.stream.startsWith(EXECUTION_STREAM_PREFIX)) {
      if (rec.stream.indexOf('/', EXECUTION_STREAM_PREFIX.length) >= 0) continue;
      const id = executionIdOf(rec.stream);
      const current = executions ?? ctx.executions;
      const d = rec.data as { workflowName?: string; parentExecutionId?: string };
      if (EXECUTION_LIVE.has(rec.type) && !d.parentExecutionId && !current[id]) {
        executions ??= { ...ctx.executions };
        executions[id] = { id, name: d.workflowName ?? '', since: rec.at };
      } else if (EXECUTION_DONE.has(rec.type) && current[id]) {
        executions ??= { ...ctx.executions };
        delete executions[id];
      }
    } else if (rec.stream.startsWith(RUN_PREFIX)) {
      const id = rec.stream.slice(RUN_PREFIX.length);
      if (rec.type === 'run.started') {
        agentRuns ??= { ...ctx.agentRuns };
        agentRuns[id] = { id, name: (rec.data as { agentId: string }).agentId, since: rec.at };
      } else if (RUN_DONE.has(rec.type) && (agentRuns ?? ctx.agentRuns)[id]) {
        agentRuns ??= { ...ctx.agentRuns };
        delete agentRuns[id];
      }
    }
  }
  if (!executions && !agentRuns) return ctx;
  return { ...ctx, ...(executions ? { executions } : {}), ...(agentRuns ? { agentRuns } : {}) };
}

export function createLiveRunsStore() {
  return createStore({
    context: { executions: {}, agentRuns: {} } as LiveRunsContext,
    on: {
      committed: (ctx: LiveRunsContext, event: { record: LogRecord }) => applyLiveRecord(ctx, event.record),
      folded: (ctx: LiveRunsContext, event: { records: readonly LogRecord[] }) => applyLiveRecords(ctx, event.records),
    },
  });
}

export type LiveRunsStore = ReturnType<typeof createLiveRunsStore>;

/** The store as a live-only projection: records from the log's head at start on. */
export function liveRunsProjection(store: LiveRunsStore): ProjectionDefinition {
  return {
    name: 'live-runs',
    startAfter: (head) => head,
    accepts: (r) => EXECUTION_LIVE.has(r.type) || EXECUTION_DONE.has(r.type) || r.type === 'run.started' || RUN_DONE.has(r.type),
    apply(records) {
      store.trigger.folded({ records });
    },
  };
}

/** What the status route shows: counts and the oldest few in flight. */
export function describeLiveRuns(ctx: LiveRunsContext, show = 20) {
  const oldest = (m: Readonly<Record<string, LiveRun>>) => Object.values(m).sort((a, b) => a.since - b.since).slice(0, show);
  return {
    executions: { count: Object.keys(ctx.executions).length, oldest: oldest(ctx.executions) },
    agentRuns: { count: Object.keys(ctx.agentRuns).length, oldest: oldest(ctx.agentRuns) },
  };
}
