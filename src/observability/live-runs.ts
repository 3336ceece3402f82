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
import { EXECUTION_STREAM_PREFIX, executionIdOf } from '../kernel/stream-ids.js';
import { RUN_TERMINAL_TYPES } from '../../machines/agent-run.machine.js';

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
/** every record type the view reads: what it takes of other nodes' records too */
const LIFECYCLE_TYPES = new Set([...EXECUTION_LIVE, ...EXECUTION_DONE, 'run.started', ...RUN_TERMINAL_TYPES]);

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
    if (RUN_TERMINAL_TYPES.has(rec.type) && ctx.agentRuns[id]) return { ...ctx, agentRuns: without(ctx.agentRuns, id) };
  }
  return ctx;
}

/**
 * The context after a fold's records: what `applyLiveRecord` gives record by record, computed as
 * the net change per id first, so a map is copied at most once per fold, and not at all when the
 * fold only holds runs that started and ended within it (an echo execution's records commit
 * together, so its start and completion usually reach the same fold).
 */
export function applyLiveRecords(ctx: LiveRunsContext, records: readonly LogRecord[]): LiveRunsContext {
  let executions: Changes | undefined;
  let agentRuns: Changes | undefined;
  for (const rec of records) {
    if (rec.stream.startsWith(EXECUTION_STREAM_PREFIX)) {
      if (rec.stream.indexOf('/', EXECUTION_STREAM_PREFIX.length) >= 0) continue;
      const id = executionIdOf(rec.stream);
      const current = executions?.has(id) ? executions.get(id)!.run : ctx.executions[id];
      const d = rec.data as { workflowName?: string; parentExecutionId?: string };
      if (EXECUTION_LIVE.has(rec.type) && !d.parentExecutionId && !current) executions = change(executions, id, { id, name: d.workflowName ?? '', since: rec.at }, false);
      else if (EXECUTION_DONE.has(rec.type) && current) executions = change(executions, id, null, false);
    } else if (rec.stream.startsWith(RUN_PREFIX)) {
      const id = rec.stream.slice(RUN_PREFIX.length);
      const current = agentRuns?.has(id) ? agentRuns.get(id)!.run : ctx.agentRuns[id];
      if (rec.type === 'run.started') agentRuns = change(agentRuns, id, { id, name: (rec.data as { agentId: string }).agentId, since: rec.at }, !!current);
      else if (RUN_TERMINAL_TYPES.has(rec.type) && current) agentRuns = change(agentRuns, id, null, false);
    }
  }
  const nextExecutions = executions ? withChanges(ctx.executions, executions) : ctx.executions;
  const nextRuns = agentRuns ? withChanges(ctx.agentRuns, agentRuns) : ctx.agentRuns;
  if (nextExecutions === ctx.executions && nextRuns === ctx.agentRuns) return ctx;
  return { ...ctx, executions: nextExecutions, agentRuns: nextRuns };
}

/**
 * Net changes of one fold, by id, in the order record-by-record folding leaves the keys: `run` is
 * what is live after the fold (null: nothing); `append` when the key ends up added at the end of
 * the map, not overwritten where it is.
 */
type Changes = Map<string, { run: LiveRun | null; append: boolean }>;

function change(changes: Changes | undefined, id: string, run: LiveRun | null, inPlace: boolean): Changes {
  const m = changes ?? new Map();
  const prev = m.get(id);
  if (run !== null && !inPlace) {
    // added while absent: the key moves to the end
    m.delete(id);
    m.set(id, { run, append: true });
  } else {
    // a removal (its position no longer matters) or an overwrite where the key is
    m.set(id, { run, append: prev?.append ?? false });
  }
  return m;
}

/** `map` with the net changes applied: the same object when they change nothing, else one copy. */
function withChanges(map: Readonly<Record<string, LiveRun>>, changes: Changes): Readonly<Record<string, LiveRun>> {
  let copy: Record<string, LiveRun> | undefined;
  for (const [id, { run, append }] of changes) {
    if (run === null && !map[id]) continue; // went live and ended within the fold
    copy ??= { ...map };
    if (run === null || append) delete copy[id];
    if (run !== null) copy[id] = run;
  }
  return copy ?? map;
}

export function createLiveRunsStore() {
  return createStore({
    context: { executions: {}, agentRuns: {} },
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
    accepts: (r) => LIFECYCLE_TYPES.has(r.type),
    interest: { typePrefixes: [...LIFECYCLE_TYPES] },
    apply(records) {
      store.trigger.folded({ records });
    },
  };
}

/** What the status route shows: counts and the oldest few in flight. */
export function describeLiveRuns(ctx: LiveRunsContext, show = 20) {
  const oldest = (m: Readonly<Record<string, LiveRun>>) =>
    Object.values(m)
      .sort((a, b) => a.since - b.since)
      .slice(0, show);
  return {
    executions: { count: Object.keys(ctx.executions).length, oldest: oldest(ctx.executions) },
    agentRuns: { count: Object.keys(ctx.agentRuns).length, oldest: oldest(ctx.agentRuns) },
  };
}
