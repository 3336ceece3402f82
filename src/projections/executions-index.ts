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
 * Every write of one drained batch, the counts and the checkpoint are issued in one synchronous
 * turn, so they share one group commit: after a crash the index is exactly at its checkpoint.
 */
import type { EventLog, LogRecord, Subscription } from '../log/types.js';
import type { ExecutionInput, ExecutionStatus } from '../../machines/workflow-execution.machine.js';
import { EXECUTION_STREAM_PREFIX, executionIdOf } from '../workflows/events.js';
import { traceRefOf } from '../observability/span-types.js';

export const EXECUTIONS_INDEX_NAME = 'workflow-executions';
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

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
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

const iso = (ms: number) => new Date(ms).toISOString();

export class ExecutionsIndex {
  private subscription: Subscription | undefined;
  private queue: LogRecord[] = [];
  private draining = false;
  private stopped = false;
  private applied = 0;
  private checkpointed = 0;
  private waiters: Array<{ seq: number; resolve: () => void }> = [];
  private counts: Record<string, number> = {};
  /** docs of running executions (bounded by what runs now); others are read from kv */
  private readonly running = new Map<string, IndexDoc>();

  constructor(
    private readonly log: EventLog,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** Loads the checkpoint, catches up with the log and follows it. */
  async start(): Promise<void> {
    const checkpoint = await this.log.getCheckpoint(EXECUTIONS_INDEX_NAME);
    this.counts = (await this.log.kv.get<Record<string, number>>(COUNTS_KEY)) ?? {};
    this.applied = checkpoint;
    this.checkpointed = checkpoint;
    this.subscription = this.log.subscribe(checkpoint, (rec) => {
      if (this.stopped) return;
      this.queue.push(rec);
      if (!this.draining) void this.drain();
    });
    await this.waitFor(this.log.head());
  }

  /** Stops following the log; records not yet written are left for the next start (from the checkpoint). */
  stop(): void {
    this.stopped = true;
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.queue = [];
  }

  /** Resolves once every record up to `seq` is applied (read-your-writes for queries). */
  waitFor(seq: number): Promise<void> {
    if (this.applied >= seq) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  get appliedSeq(): number {
    return this.applied;
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        const docs = new Map<string, IndexDoc | null>();
        const before = new Map<string, IndexDoc | null>();
        for (const rec of batch) if (rec.stream.startsWith(EXECUTION_STREAM_PREFIX)) await this.apply(rec, docs, before);
        if (this.stopped) return;
        this.write(docs, before, batch[batch.length - 1].seq);
      }
    } catch (err) {
      this.onError(err);
    } finally {
      this.draining = false;
    }
  }

  private async load(id: string, docs: Map<string, IndexDoc | null>, before: Map<string, IndexDoc | null>): Promise<IndexDoc | null> {
    if (docs.has(id)) return docs.get(id)!;
    const doc = this.running.get(id) ?? (await this.log.kv.get<IndexDoc>(`${P}r/${id}`)) ?? null;
    if (!before.has(id)) before.set(id, doc);
    docs.set(id, doc);
    return doc;
  }

  private async apply(rec: LogRecord, docs: Map<string, IndexDoc | null>, before: Map<string, IndexDoc | null>): Promise<void> {
    const id = executionIdOf(rec.stream);
    const d = rec.data as Record<string, any>;
    if (rec.type === 'execution.started') {
      const s = d as ExecutionInput;
      if (s.parentExecutionId) return; // child executions are part of their parent
      // the same engine keys as the record view (executions-view.ts), so `metadata.traceId=` filters work
      const metadata = { ...(s.metadata ?? {}), ...traceRefOf(rec.stream, s.traceId, false) };
      if (s.replay) Object.assign(metadata, { replayedFromExecutionId: s.replay.fromExecutionId, replayFromStepId: s.replay.fromStepId, replayedAt: iso(s.replay.replayedAt) });
      if (!before.has(id)) before.set(id, null);
      docs.set(id, { id, workflowId: s.workflowId, status: 'running', createdAt: s.createdAt ?? rec.at, ...(s.userId !== undefined ? { userId: s.userId } : {}), metadata });
      return;
    }
    let status: ExecutionStatus | undefined;
    let meta: Record<string, unknown> | undefined;
    switch (rec.type) {
      case 'execution.suspended':
        status = 'suspended';
        break;
      case 'execution.resumed':
        [status, meta] = ['running', { resumedAt: iso(rec.at) }];
        break;
      case 'execution.recovered':
        meta = { recoveredAt: iso(rec.at) };
        break;
      case 'execution.completed':
        status = 'completed';
        break;
      case 'execution.failed':
        [status, meta] = ['error', { errorMessage: d.error?.message }];
        break;
      case 'execution.cancelled':
        [status, meta] = ['cancelled', { cancellationReason: d.reason }];
        break;
      default:
        return;
    }
    if (rec.stream.indexOf('/', EXECUTION_STREAM_PREFIX.length) >= 0) return; // a child stream
    const doc = await this.load(id, docs, before);
    if (!doc) return;
    docs.set(id, { ...doc, ...(status ? { status } : {}), metadata: meta ? { ...doc.metadata, ...meta } : doc.metadata });
  }

  /** Issues every write of a batch in one synchronous turn (one group commit). */
  private write(docs: Map<string, IndexDoc | null>, before: Map<string, IndexDoc | null>, lastSeq: number): void {
    const kv = this.log.kv;
    const fail = (err: unknown) => this.onError(err);
    for (const [id, doc] of docs) {
      const old = before.get(id) ?? null;
      if (!doc || doc === old) continue;
      if (old) {
        for (const k of indexKeys(old)) kv.del(k).catch(fail);
        for (const b of bucketKeys(old)) this.counts[b] = (this.counts[b] ?? 1) - 1;
      }
      kv.put(`${P}r/${id}`, doc).catch(fail);
      for (const k of indexKeys(doc)) kv.put(k, doc).catch(fail);
      for (const b of bucketKeys(doc)) this.counts[b] = (this.counts[b] ?? 0) + 1;
      if (doc.status === 'running') this.running.set(id, doc);
      else this.running.delete(id);
    }
    // the checkpoint rides with the batch's writes; batches without changes only move it now and then
    // (re-applying records that change nothing is harmless)
    if (docs.size > 0 || lastSeq - this.checkpointed >= CHECKPOINT_EVERY) {
      if (docs.size > 0) kv.put(COUNTS_KEY, this.counts).catch(fail);
      this.log.setCheckpoint(EXECUTIONS_INDEX_NAME, lastSeq).catch(fail);
      this.checkpointed = lastSeq;
    }
    this.applied = lastSeq;
    if (this.waiters.length > 0) {
      const ready = this.waiters.filter((w) => w.seq <= lastSeq);
      this.waiters = this.waiters.filter((w) => w.seq > lastSeq);
      for (const w of ready) w.resolve();
    }
  }

  private prefixFor(f: ExecutionsFilter): string {
    if (f.workflowId !== undefined && f.status !== undefined) return `${P}ws/${f.workflowId}${SEP}${f.status}${SEP}`;
    if (f.workflowId !== undefined) return `${P}w/${f.workflowId}${SEP}`;
    if (f.status !== undefined) return `${P}s/${f.status}${SEP}`;
    return `${P}t/`;
  }

  /** One page of matching executions (createdAt desc, id desc) and the number of all matches. */
  async query(f: ExecutionsFilter, limit: number, offset: number): Promise<{ docs: IndexDoc[]; total: number }> {
    const prefix = this.prefixFor(f);
    const gte = prefix + ts(f.from ?? 0);
    const lt = prefix + (f.to !== undefined ? ts(f.to + 1) : '~');
    const residual = f.userId !== undefined || (f.metadata && Object.keys(f.metadata).length > 0) || f.from !== undefined || f.to !== undefined;
    if (!residual) {
      const total = Math.max(0, this.counts[`${f.workflowId ?? '*'}|${f.status ?? '*'}`] ?? 0);
      if (offset >= total) return { docs: [], total };
      const rows = await this.log.kv.range<IndexDoc>({ gte, lt, reverse: true, limit: offset + limit });
      return { docs: rows.slice(offset).map(([, d]) => d), total };
    }
    const docs: IndexDoc[] = [];
    let total = 0;
    let upper = lt;
    for (;;) {
      const rows = await this.log.kv.range<IndexDoc>({ gte, lt: upper, reverse: true, limit: CHUNK });
      for (const [, d] of rows) {
        if (!matches(d, f)) continue;
        if (total >= offset && docs.length < limit) docs.push(d);
        total++;
      }
      if (rows.length < CHUNK) break;
      upper = rows[rows.length - 1][0];
    }
    return { docs, total };
  }

  /** Ids of every execution in `status` (boot-time recovery). */
  async idsWithStatus(status: ExecutionStatus): Promise<string[]> {
    const ids: string[] = [];
    const prefix = `${P}s/${status}${SEP}`;
    let upper = `${prefix}~`;
    for (;;) {
      const rows = await this.log.kv.range<IndexDoc>({ gte: prefix, lt: upper, reverse: true, limit: CHUNK });
      for (const [, d] of rows) ids.push(d.id);
      if (rows.length < CHUNK) break;
      upper = rows[rows.length - 1][0];
    }
    return ids.reverse();
  }
}
