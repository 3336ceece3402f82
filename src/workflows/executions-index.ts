/**
 * The executions index: a persisted projection of the log in its `kv` store that serves
 * `GET /workflows/executions` and boot-time recovery without scanning records or holding every
 * execution in memory. Only top-level executions are indexed, and only status-changing records
 * touch it (started, suspended, resumed, recovered, completed, failed, cancelled).
 *
 * Keys (createdAt as 15 digits, so byte order = time order; reverse ranges give createdAt desc,
 * then id desc):
 *   wfx/r/<id>                                → IndexDoc
 *   wfx/t/<ts>/<id>                           → IndexDoc   (all executions)
 *   wfx/w/<workflowId>\x01<ts>/<id>           → IndexDoc   (by workflow)
 *   wfx/s/<status>\x01<ts>/<id>               → IndexDoc   (by status)
 *   wfx/ws/<workflowId>\x01<status>\x01<ts>/<id> → IndexDoc (by workflow and status)
 *   wfx/counts                                → counts per (workflow|*, status|*) bucket
 *   wfx/tomb/<id>                             → Tombstone of an execution retention removed
 * A `retention.removed` record (retention-records.ts) drops the rows of the executions it names and
 * leaves their tombstones; `retention.expired` drops tombstones. Folded in log order like the rest,
 * so the rows after a removal are those a rebuild of the remaining log writes.
 * Every write of one drained batch, the counts and the checkpoint are issued in one synchronous
 * turn, so they share one group commit: after a crash the index is exactly at its checkpoint.
 */
import type { EventLog, KeyValueStore, LogRecord } from '../log/types.js';
import { invalidRequest } from '../errors.js';
import { ProjectionHandle, RUN_ROWS_LINGER_MS, type ProjectionDefinition, type ProjectionWrites } from '../projections/runner.js';
import { statusAfterRecord, type ExecutionInput, type ExecutionStatus } from '../../machines/workflow-execution.machine.js';
import { applyRecord, startView, type ExecutionRecordView } from './executions-view.js';
import { EXECUTION_STREAM_PREFIX, executionIdOf, executionStream } from './events.js';
import { RETENTION_EXPIRED, RETENTION_REMOVED, RETENTION_STREAM_PREFIX, tombstoneKey, type RetentionRemovedData, type Tombstone } from './retention-records.js';

const EXECUTIONS_INDEX_NAME = 'workflow-executions';
const P = 'wfx/';
const SEP = '\u0001';
const COUNTS_KEY = `${P}counts`;
const CHUNK = 1000;
const CHECKPOINT_EVERY = 10_000;
const MAX_TS = 999_999_999_999_999;

export interface IndexDoc {
  id: string;
  workflowId: string;
  status: ExecutionStatus;
  createdAt: number;
  userId?: string;
  metadata: Record<string, unknown>;
}

export interface ExecutionsFilter {
  workflowId?: string;
  status?: ExecutionStatus;
  /** inclusive bounds on createdAt (epoch ms) */
  from?: number;
  to?: number;
  userId?: string;
  /** every key must deep-equal */
  metadata?: Record<string, unknown>;
}

const ts = (ms: number) => String(Math.max(0, Math.min(MAX_TS, Math.floor(ms)))).padStart(15, '0');

function indexKeys(d: IndexDoc): string[] {
  const t = `${ts(d.createdAt)}/${d.id}`;
  return [`${P}t/${t}`, `${P}w/${d.workflowId}${SEP}${t}`, `${P}s/${d.status}${SEP}${t}`, `${P}ws/${d.workflowId}${SEP}${d.status}${SEP}${t}`];
}

const bucketKeys = (d: IndexDoc) => ['*|*', `${d.workflowId}|*`, `*|${d.status}`, `${d.workflowId}|${d.status}`];

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

export function matches(d: IndexDoc, f: ExecutionsFilter): boolean {
  if (f.workflowId !== undefined && d.workflowId !== f.workflowId) return false;
  if (f.status !== undefined && d.status !== f.status) return false;
  if (f.from !== undefined && d.createdAt < f.from) return false;
  if (f.to !== undefined && d.createdAt > f.to) return false;
  if (f.userId !== undefined && d.userId !== f.userId) return false;
  if (f.metadata) for (const [k, v] of Object.entries(f.metadata)) if (!deepEqual(d.metadata?.[k], v)) return false;
  return true;
}

/**
 * A page cursor: the sort position (`<createdAt, 15 digits>/<id>`) of the last row of a page,
 * base64url-encoded so clients treat it as opaque. Every index's keys end with that position, so
 * one cursor works whatever the filter.
 */
const cursorOf = (d: IndexDoc): string => Buffer.from(`${ts(d.createdAt)}/${d.id}`, 'utf8').toString('base64url');

/** The sort position of a cursor; throws a 400 naming the parameter when it is not one. */
function decodeCursor(cursor: string): string {
  const pos = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!/^\d{15}\/[^/]/.test(pos)) throw invalidRequest('cursor: not a cursor of this list (use nextCursor of a previous page)');
  return pos;
}

/** The slim row of the secondary keys (what filters read). */
function indexDocOf(v: ExecutionRecordView): IndexDoc {
  return { id: v.id, workflowId: v.workflowId, status: v.status, createdAt: Date.parse(v.createdAt), ...(v.userId !== undefined ? { userId: v.userId } : {}), metadata: v.metadata };
}

/** Whether two slim rows have the same keys and filterable content (then the secondary keys stay). */
const sameRow = (a: IndexDoc, b: IndexDoc) => a.status === b.status && deepEqual(a.metadata, b.metadata);

/**
 * The index as a projection definition. Every record of a top-level execution is folded into its
 * summary view (executions-view.ts, execution-level events only); the kv store is written only
 * when the status changes (or on start and recovery), so a step costs no index write. Summaries
 * of running executions live in memory and are always current; the stored one is current for
 * every settled execution, because its settling record is its last.
 */
class ExecutionsIndexDefinition implements ProjectionDefinition {
  readonly name = EXECUTIONS_INDEX_NAME;
  readonly shared = true;
  /** a short run's start and end mostly fold together: its row and keys are written once, not twice */
  readonly lingerMs = RUN_ROWS_LINGER_MS;
  readonly checkpointEvery = CHECKPOINT_EVERY;
  readonly keyRange = { gte: P, lt: `${P.slice(0, -1)}0` };
  counts: Record<string, number> = {};
  /** summaries of running executions (bounded by what runs now); others are read from kv */
  readonly running = new Map<string, ExecutionRecordView>();

  constructor(private readonly log: EventLog) {}

  readonly interest = { streamPrefixes: [EXECUTION_STREAM_PREFIX, RETENTION_STREAM_PREFIX] };

  accepts(rec: LogRecord): boolean {
    // top-level execution streams only: child executions are part of their parent
    if (rec.stream.startsWith(RETENTION_STREAM_PREFIX)) return true;
    return rec.stream.startsWith(EXECUTION_STREAM_PREFIX) && rec.stream.indexOf('/', EXECUTION_STREAM_PREFIX.length) < 0;
  }

  /**
   * The counts, and the current summaries of running executions: a stored one can lag its stream
   * (steps since its last status change were folded in memory only), so the records between it and
   * the checkpoint are folded in again; the ones after the checkpoint are the runner's to fold.
   */
  async load(kv: KeyValueStore, checkpoint: number): Promise<void> {
    await this.refresh(kv);
    this.running.clear();
    if (!this.counts['*|running']) return;
    for (const id of await scanIds(kv, 'running')) {
      const view = await kv.get<ExecutionRecordView>(`${P}r/${id}`);
      if (!view) continue;
      for (const rec of await this.log.readStream(executionStream(id), view.lastSequence + 1)) {
        if (rec.seq > checkpoint) break;
        applyRecord(view, rec, 'execution');
      }
      this.running.set(id, view);
    }
  }

  reset(): void {
    this.counts = {};
    this.running.clear();
  }

  /** On a node that does not fold the index: the counts as the folding node last wrote them (summaries are read per query). */
  async refresh(kv: KeyValueStore): Promise<void> {
    this.counts = (await kv.get<Record<string, number>>(COUNTS_KEY)) ?? {};
  }

  async apply(records: readonly LogRecord[], writes: ProjectionWrites, kv: KeyValueStore): Promise<void> {
    const views = new Map<string, ExecutionRecordView>();
    const before = new Map<string, IndexDoc | null>();
    const changed = new Set<string>();
    for (const rec of records) {
      if (rec.stream.startsWith(RETENTION_STREAM_PREFIX)) {
        await this.applyRetention(rec, writes, kv, views, before, changed);
        continue;
      }
      const id = executionIdOf(rec.stream);
      if (rec.type === 'execution.started') {
        if ((rec.data as ExecutionInput).parentExecutionId) continue;
        if (!before.has(id)) before.set(id, null);
        const view = startView(rec);
        applyRecord(view, rec, 'execution');
        views.set(id, view);
        changed.add(id);
        continue;
      }
      const view = views.get(id) ?? (await this.loadView(id, rec, kv, before));
      if (!view) continue;
      views.set(id, view);
      applyRecord(view, rec, 'execution');
      if (statusAfterRecord(rec.type) !== undefined || rec.type === 'execution.recovered') changed.add(id);
    }
    for (const [id, view] of views) {
      if (view.status === 'running') this.running.set(id, view);
      else this.running.delete(id);
    }
    for (const id of changed) {
      const view = views.get(id)!;
      const doc = indexDocOf(view);
      const old = before.get(id) ?? null;
      writes.put(`${P}r/${id}`, view);
      if (old && sameRow(old, doc)) continue;
      if (old) {
        for (const k of indexKeys(old)) writes.del(k);
        this.uncount(old);
      }
      for (const k of indexKeys(doc)) writes.put(k, doc);
      for (const b of bucketKeys(doc)) this.counts[b] = (this.counts[b] ?? 0) + 1;
    }
    if (writes.size > 0) writes.put(COUNTS_KEY, { ...this.counts });
  }

  /**
   * A retention record: the rows of each removed execution go (what is stored, and what this fold
   * holds of it), its counts with them, and a tombstone stays; an expiry drops tombstones.
   */
  private async applyRetention(
    rec: LogRecord,
    writes: ProjectionWrites,
    kv: KeyValueStore,
    views: Map<string, ExecutionRecordView>,
    before: Map<string, IndexDoc | null>,
    changed: Set<string>,
  ): Promise<void> {
    const ids = (rec.data as RetentionRemovedData | undefined)?.executionIds ?? [];
    if (rec.type === RETENTION_EXPIRED) {
      for (const id of ids) writes.del(tombstoneKey(id));
      return;
    }
    if (rec.type !== RETENTION_REMOVED) return;
    for (const id of ids) {
      // the row stored now: as this fold found it, else as kv (or memory, for a running one) holds it
      let stored: IndexDoc | null;
      if (before.has(id)) stored = before.get(id) ?? null;
      else {
        const view = this.running.get(id) ?? (await kv.get<ExecutionRecordView>(`${P}r/${id}`));
        stored = view ? indexDocOf(view) : null;
      }
      views.delete(id);
      changed.delete(id);
      this.running.delete(id);
      // a later record of the same id starts a new execution (an idempotency key freed by the removal)
      before.set(id, null);
      writes.put(tombstoneKey(id), { removedAt: rec.at } satisfies Tombstone);
      if (!stored) continue;
      writes.del(`${P}r/${id}`);
      for (const k of indexKeys(stored)) writes.del(k);
      this.uncount(stored);
    }
    writes.put(COUNTS_KEY, { ...this.counts });
  }

  private uncount(d: IndexDoc): void {
    for (const b of bucketKeys(d)) {
      // an empty bucket is dropped, so the stored counts do not depend on how records were batched
      const n = (this.counts[b] ?? 1) - 1;
      if (n > 0) this.counts[b] = n;
      else delete this.counts[b];
    }
  }

  /**
   * A summary to fold `rec` into: the in-memory one of a running execution, else the stored one.
   * A stored summary can lag its stream (steps since its last status change were folded in memory
   * before a restart): the records in between are read from the log and folded first.
   */
  private async loadView(id: string, rec: LogRecord, kv: KeyValueStore, before: Map<string, IndexDoc | null>): Promise<ExecutionRecordView | undefined> {
    const view = this.running.get(id) ?? (await kv.get<ExecutionRecordView>(`${P}r/${id}`));
    // the row as it was (metadata copied: folding changes the view's in place)
    if (!before.has(id)) before.set(id, view ? { ...indexDocOf(view), metadata: structuredClone(view.metadata) } : null);
    if (!view || rec.streamSeq <= view.lastSequence) return undefined;
    if (rec.streamSeq > view.lastSequence + 1) {
      for (const missed of await this.log.readStream(rec.stream, view.lastSequence + 1, rec.streamSeq - 1)) applyRecord(view, missed, 'execution');
    }
    return view;
  }
}

export class ExecutionsIndex extends ProjectionHandle {
  private readonly definition: ExecutionsIndexDefinition;

  constructor(log: EventLog, onError: (err: unknown) => void = () => undefined) {
    super(log, { onError });
    this.definition = new ExecutionsIndexDefinition(log);
  }

  protected projection(): ProjectionDefinition {
    return this.definition;
  }

  private get counts(): Record<string, number> {
    return this.definition.counts;
  }

  private prefixFor(f: ExecutionsFilter): string {
    if (f.workflowId !== undefined && f.status !== undefined) return `${P}ws/${f.workflowId}${SEP}${f.status}${SEP}`;
    if (f.workflowId !== undefined) return `${P}w/${f.workflowId}${SEP}`;
    if (f.status !== undefined) return `${P}s/${f.status}${SEP}`;
    return `${P}t/`;
  }

  /**
   * One page of matching executions (createdAt desc, id desc), the number of all matches and, when
   * more follow, the cursor of the next page. A cursor is a position in the index (after the last
   * row of the previous page), so a page costs a range read of `limit` rows wherever it is; an
   * `offset` counts rows from the start (or from the cursor). `total` of a workflow/status filter is
   * the fold's counter; a time range or user/metadata filter counts the rows of its range.
   */
  async query(f: ExecutionsFilter, limit: number, offset: number, cursor?: string): Promise<{ docs: IndexDoc[]; total: number; nextCursor?: string }> {
    const prefix = this.prefixFor(f);
    const gte = prefix + ts(f.from ?? 0);
    const lt = prefix + (f.to !== undefined ? ts(f.to + 1) : '~');
    const at = cursor === undefined ? undefined : prefix + decodeCursor(cursor);
    const start = at !== undefined && at < lt ? at : lt;
    const residual = f.userId !== undefined || (f.metadata && Object.keys(f.metadata).length > 0);
    if (!residual) {
      const ranged = f.from !== undefined || f.to !== undefined;
      const total = ranged ? await this.countRange(gte, lt) : Math.max(0, this.counts[`${f.workflowId ?? '*'}|${f.status ?? '*'}`] ?? 0);
      const rows = await this.kv.range<IndexDoc>({ gte, lt: start, reverse: true, limit: offset + limit + 1 });
      const docs = rows.slice(offset, offset + limit).map(([, d]) => d);
      return { docs, total, ...(rows.length > offset + limit ? { nextCursor: cursorOf(docs[docs.length - 1]) } : {}) };
    }
    const docs: IndexDoc[] = [];
    let total = 0;
    let skipped = 0;
    let more = false;
    let upper = lt;
    for (;;) {
      const rows = await this.kv.range<IndexDoc>({ gte, lt: upper, reverse: true, limit: CHUNK });
      for (const [k, d] of rows) {
        if (!matches(d, f)) continue;
        total++;
        if (k >= start) continue;
        if (skipped < offset) skipped++;
        else if (docs.length < limit) docs.push(d);
        else more = true;
      }
      if (rows.length < CHUNK) break;
      upper = rows[rows.length - 1][0];
    }
    return { docs, total, ...(more ? { nextCursor: cursorOf(docs[docs.length - 1]) } : {}) };
  }

  /** Rows in `[gte, lt)` of one index, counted chunk by chunk (a time range has no counter of its own: each row is read). */
  private async countRange(gte: string, lt: string): Promise<number> {
    let n = 0;
    let upper = lt;
    for (;;) {
      const rows = await this.kv.range({ gte, lt: upper, reverse: true, limit: CHUNK });
      n += rows.length;
      if (rows.length < CHUNK) return n;
      upper = rows[rows.length - 1][0];
    }
  }

  /**
   * The summary views of `docs` (rows of `query`): the in-memory view of a running execution,
   * the stored one of any other. Their `events` are the execution-level ones only.
   */
  async summaries(docs: readonly IndexDoc[]): Promise<ExecutionRecordView[]> {
    // the running ones from memory, the others in one read of the store
    const running = docs.map((d) => this.definition.running.get(d.id));
    const missing = docs.filter((_, i) => running[i] === undefined);
    const stored = missing.length > 0 ? await this.kv.getMany<ExecutionRecordView>(missing.map((d) => `${P}r/${d.id}`)) : [];
    let next = 0;
    const views = running.map((view) => view ?? stored[next++]);
    const found = views.filter((v): v is ExecutionRecordView => v !== undefined);
    return this.folds ? found : Promise.all(found.map((v) => this.current(v)));
  }

  /**
   * A stored summary brought up to its stream on a node that does not fold the index: a running
   * execution's row is written at status changes only, so its steps since are read and folded here.
   */
  private async current(view: ExecutionRecordView): Promise<ExecutionRecordView> {
    if (view.status !== 'running') return view;
    for (const rec of await this.log.readStream(executionStream(view.id), view.lastSequence + 1)) applyRecord(view, rec, 'execution');
    return view;
  }

  /** How many top-level executions of each workflow the index holds (from its counters: no scan). */
  executionsPerWorkflow(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [bucket, n] of Object.entries(this.counts)) {
      if (n > 0 && bucket.endsWith('|*') && bucket !== '*|*') out.set(bucket.slice(0, -2), n);
    }
    return out;
  }

  /** How many of one workflow's executions are in one of `statuses` (from the counters: no scan). */
  countOf(workflowId: string, statuses: Iterable<ExecutionStatus>): number {
    let n = 0;
    for (const status of statuses) n += this.counts[`${workflowId}|${status}`] ?? 0;
    return n;
  }

  /** Rows of one workflow's executions, oldest first, read chunk by chunk (retention's scan: it stops once it has what it needs). */
  async *rowsOf(workflowId: string): AsyncGenerator<IndexDoc> {
    const prefix = `${P}w/${workflowId}${SEP}`;
    const upper = `${prefix}~`;
    let lower = prefix;
    for (;;) {
      const rows = await this.kv.range<IndexDoc>({ gte: lower, lt: upper, limit: CHUNK });
      for (const [, d] of rows) yield d;
      if (rows.length < CHUNK) return;
      // the next key after the last one read
      lower = `${rows[rows.length - 1][0]}\u0000`;
    }
  }

  /** The stored summary of one execution (the in-memory one while it runs). */
  async summary(id: string): Promise<ExecutionRecordView | undefined> {
    const view = this.definition.running.get(id) ?? (await this.kv.get<ExecutionRecordView>(`${P}r/${id}`));
    return view && !this.folds ? this.current(view) : view;
  }

  /** Ids of every execution in `status` (boot-time recovery). */
  idsWithStatus(status: ExecutionStatus): Promise<string[]> {
    return scanIds(this.kv, status);
  }
}

/** Ids of every execution in `status`, oldest first. */
async function scanIds(kv: KeyValueStore, status: ExecutionStatus): Promise<string[]> {
  const ids: string[] = [];
  const prefix = `${P}s/${status}${SEP}`;
  let upper = `${prefix}~`;
  for (;;) {
    const rows = await kv.range<IndexDoc>({ gte: prefix, lt: upper, reverse: true, limit: CHUNK });
    for (const [, d] of rows) ids.push(d.id);
    if (rows.length < CHUNK) break;
    upper = rows[rows.length - 1][0];
  }
  return ids.reverse();
}
