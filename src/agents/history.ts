/**
 * The agent-history projection: `GET /agents/:id/history` read from the log's key/value store, fed
 * by every committed record through the projection runner (catch-up from its checkpoint, then live).
 * Nothing lives only on the heap: in memory are just the entries of runs in flight and the counts;
 * a burst of records is one fold, hence one kv write per run.
 *
 * kv layout (`h` = `agent-history`):
 * - `h/e/<agentId>/<startSeq, 16 digits>` → StoredHistoryEntry (reverse range = newest first)
 * - `h/r/<runId>` → entry key, only while the run is working (the boot-time scan of interrupted runs)
 * - `h/n/<agentId>` → `{total, seq}` entries per agent (`seq` makes the count idempotent)
 * - `h/t/<runId>` → `{removedAt}` a run retention removed, while its pass's tombstones last
 * Checkpoint `agent-history` = last global sequence applied and flushed.
 *
 * Retention's records (src/contract/retention.ts) are folded like the runs' own: `retention.removed`
 * drops the entries of the runs it names (and their count, when the entry is there: a rebuild of the
 * remaining log never made one) and writes their tombstones; `retention.expired` drops tombstones.
 * So the history after a pass equals a rebuild of the remaining log, on every node.
 */
import type { EventLog, KeyValueStore, LogRecord } from '../log/types.js';
import { invalidRequest } from '../errors.js';
import { ProjectionHandle, RUN_ROWS_LINGER_MS, type ProjectionDefinition, type ProjectionWrites } from '../projections/runner.js';
import { applyHistoryRecord, isTerminalStatus, type HistoryEntry, type StoredHistoryEntry } from '../contract/agent-history-entry.js';
import { RETENTION_EXPIRED, RETENTION_REMOVED, RETENTION_STREAM_PREFIX, removedRunsOf } from '../contract/retention.js';

const NAME = 'agent-history';
const P = 'agent-history';
const pad = (n: number) => String(n).padStart(16, '0');
const agentPrefix = (agentId: string) => `${P}/e/${encodeURIComponent(agentId)}/`;
const entryKey = (agentId: string, startSeq: number) => `${agentPrefix(agentId)}${pad(startSeq)}`;
const runKey = (runId: string) => `${P}/r/${runId}`;
const countKey = (agentId: string) => `${P}/n/${encodeURIComponent(agentId)}`;
const COUNTS = { gte: `${P}/n/`, lt: `${P}/n0` };
const tombstoneKey = (runId: string) => `${P}/t/${runId}`;
/** entries read per range when walking an agent's whole history (retention's plan) */
const WALK_CHUNK = 256;
const RUN_PREFIX = 'run:';

interface Count {
  total: number;
  seq: number;
}

export interface HistoryPage {
  entries: HistoryEntry[];
  pagination: { page: number; limit: number; total: number; totalPages: number };
  /** the `cursor` of the next page; absent on the last one */
  nextCursor?: string;
}

/** The entry position (16-digit start sequence) of a history cursor; a 400 naming the parameter otherwise. */
function decodeHistoryCursor(cursor: string): string {
  const pos = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!/^\d{16}$/.test(pos)) throw invalidRequest('cursor: not a cursor of this history (use nextCursor of a previous page)');
  return pos;
}

export interface AgentHistoryOptions {
  onError?: (err: unknown) => void;
}

/** The history as a projection definition: folds run records into entries, writes the changed ones. */
class AgentHistoryDefinition implements ProjectionDefinition {
  readonly name = NAME;
  readonly shared = true;
  /** a short run's start and end mostly fold together: its entry is written once, not twice */
  readonly lingerMs = RUN_ROWS_LINGER_MS;
  readonly keyRange = { gte: `${P}/`, lt: `${P}0` };
  /** entries of runs in flight, by stream */
  private readonly live = new Map<string, StoredHistoryEntry>();
  readonly counts = new Map<string, Count>();
  /** in-flight runs whose `h/r/<runId>` pointer is in the kv store */
  private readonly pointed = new Set<string>();

  constructor(private readonly onError: (err: unknown) => void) {}

  accepts(r: LogRecord): boolean {
    return r.stream.startsWith(RUN_PREFIX) || r.stream.startsWith(RETENTION_STREAM_PREFIX);
  }

  readonly interest = { streamPrefixes: [RUN_PREFIX, RETENTION_STREAM_PREFIX] };

  /** Every agent's count, so the status can sum them without reading the store. */
  load(kv: KeyValueStore): Promise<void> {
    return this.refresh(kv);
  }

  reset(): void {
    this.live.clear();
    this.counts.clear();
    this.pointed.clear();
  }

  /** On a node that does not fold the history: the counts as the folding node last wrote them (entries are read per query). */
  async refresh(kv: KeyValueStore): Promise<void> {
    const rows = await kv.range<Count>(COUNTS);
    this.counts.clear();
    for (const [key, count] of rows) this.counts.set(decodeURIComponent(key.slice(COUNTS.gte.length)), count);
  }

  async apply(records: readonly LogRecord[], writes: ProjectionWrites, kv: KeyValueStore): Promise<void> {
    const dirty = new Set<string>();
    const dirtyCounts = new Set<string>();
    for (const r of records) {
      try {
        if (r.stream.startsWith(RETENTION_STREAM_PREFIX)) await this.foldRetention(r, writes, kv, dirty, dirtyCounts);
        else await this.fold(r, kv, dirty, dirtyCounts);
      } catch (err) {
        // one bad record must not stop the projection: report it and go on
        this.onError(err);
      }
    }
    for (const stream of dirty) {
      const s = this.live.get(stream)!;
      const key = entryKey(s.agentId, s.startSeq);
      writes.put(key, s);
      const runId = stream.slice(RUN_PREFIX.length);
      if (isTerminalStatus(s.entry.status)) {
        // a run that started and ended within one fold never had a pointer
        if (this.pointed.delete(stream)) writes.del(runKey(runId));
        this.live.delete(stream);
      } else if (!this.pointed.has(stream)) {
        writes.put(runKey(runId), key);
        this.pointed.add(stream);
      }
    }
    for (const agentId of dirtyCounts) writes.put(countKey(agentId), { ...this.counts.get(agentId)! });
  }

  private async fold(r: LogRecord, kv: KeyValueStore, dirty: Set<string>, dirtyCounts: Set<string>): Promise<void> {
    let current = this.live.get(r.stream);
    if (!current && r.type !== 'run.started') {
      current = await loadEntry(kv, r.stream);
      if (current) this.pointed.add(r.stream);
    }
    const next = applyHistoryRecord(current, r);
    if (!next || next === current) return;
    if (r.type === 'run.started' && (!current || current.seq < r.seq)) {
      const c = await this.loadCount(kv, next.agentId);
      if (c.seq < r.seq) {
        c.total += 1;
        c.seq = r.seq;
        dirtyCounts.add(next.agentId);
      }
    }
    this.live.set(r.stream, next);
    dirty.add(r.stream);
  }

  /**
   * A retention record: each removed run's entry goes (as this fold holds it, or as stored), its
   * count with it when there was one, and a tombstone stays; an expiry drops tombstones. A run
   * whose records this node never folded (it was behind the removal, or this is a rebuild of the
   * remaining log) only leaves its tombstone. The count's `seq` (the guard against counting a start
   * twice) moves to the removal either way, so until the tombstones expire the stored rows equal a
   * rebuild's exactly; after that only the guard's position can differ.
   */
  private async foldRetention(r: LogRecord, writes: ProjectionWrites, kv: KeyValueStore, dirty: Set<string>, dirtyCounts: Set<string>): Promise<void> {
    const runs = removedRunsOf(r.data);
    if (r.type === RETENTION_EXPIRED) {
      for (const run of runs) writes.del(tombstoneKey(run.runId));
      return;
    }
    if (r.type !== RETENTION_REMOVED) return;
    for (const run of runs) {
      const stream = `${RUN_PREFIX}${run.runId}`;
      const key = entryKey(run.agentId, run.startSeq);
      const inFold = this.live.get(stream)?.startSeq === run.startSeq;
      const c = await this.loadCount(kv, run.agentId);
      if (inFold || (await kv.get(key)) !== undefined) c.total = Math.max(0, c.total - 1);
      // the count names the removal whether or not the entry was here, so it reads the same after a rebuild
      c.seq = Math.max(c.seq, r.seq);
      dirtyCounts.add(run.agentId);
      if (inFold) {
        this.live.delete(stream);
        dirty.delete(stream);
        if (this.pointed.delete(stream)) writes.del(runKey(run.runId));
      }
      writes.del(key);
      writes.put(tombstoneKey(run.runId), { removedAt: r.at });
    }
  }

  async loadCount(kv: KeyValueStore, agentId: string): Promise<Count> {
    let c = this.counts.get(agentId);
    if (!c) {
      c = (await kv.get<Count>(countKey(agentId))) ?? { total: 0, seq: 0 };
      // a concurrent loader may have won while we waited
      c = this.counts.get(agentId) ?? c;
      this.counts.set(agentId, c);
    }
    return c;
  }
}

async function loadEntry(kv: KeyValueStore, stream: string): Promise<StoredHistoryEntry | undefined> {
  const key = await kv.get<string>(runKey(stream.slice(RUN_PREFIX.length)));
  if (key === undefined) return undefined;
  return kv.get<StoredHistoryEntry>(key);
}

export class AgentHistoryProjection extends ProjectionHandle {
  private readonly definition: AgentHistoryDefinition;

  constructor(log: EventLog, options: AgentHistoryOptions = {}) {
    const onError = options.onError ?? (() => undefined);
    super(log, { onError });
    this.definition = new AgentHistoryDefinition(onError);
  }

  protected projection(): ProjectionDefinition {
    return this.definition;
  }

  /** When retention removed `runId` (epoch ms), while its tombstone lasts. */
  async removedAt(runId: string): Promise<number | undefined> {
    return (await this.kv.get<{ removedAt: number }>(tombstoneKey(runId)))?.removedAt;
  }

  /** Runs in the history per agent that has any (the kept counts: no read of the store). */
  runsPerAgent(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [agentId, c] of this.definition.counts) if (c.total > 0) out.set(agentId, c.total);
    return out;
  }

  /** An agent's whole history, oldest first, read a chunk at a time (retention's plan: it stops once it has what it needs). */
  async *entriesOldestFirst(agentId: string): AsyncGenerator<StoredHistoryEntry> {
    const prefix = agentPrefix(agentId);
    const lt = `${prefix.slice(0, -1)}0`;
    let gte = prefix;
    for (;;) {
      const rows = await this.kv.range<StoredHistoryEntry>({ gte, lt, limit: WALK_CHUNK });
      for (const [, stored] of rows) yield stored;
      if (rows.length < WALK_CHUNK) return;
      // the next key after the last one read
      gte = `${rows[rows.length - 1][0]}\u0000`;
    }
  }

  /** An agent's whole history, newest first, read a chunk at a time (retention's plan counts its terminal runs). */
  async *entriesNewestFirst(agentId: string): AsyncGenerator<StoredHistoryEntry> {
    const prefix = agentPrefix(agentId);
    let lt = `${prefix.slice(0, -1)}0`;
    for (;;) {
      const rows = await this.kv.range<StoredHistoryEntry>({ gte: prefix, lt, reverse: true, limit: WALK_CHUNK });
      for (const [, stored] of rows) yield stored;
      if (rows.length < WALK_CHUNK) return;
      lt = rows[rows.length - 1][0];
    }
  }

  /** Run ids whose last record left them working (used at boot to close interrupted runs). */
  async workingRuns(): Promise<string[]> {
    const rows = await this.kv.range<string>({ gte: `${P}/r/`, lt: `${P}/r0` });
    return rows.map(([k]) => k.slice(`${P}/r/`.length));
  }

  /**
   * One page of an agent's history, newest first. `page` is 0-based and counts pages of `limit`
   * from the newest entry (or from the cursor); a cursor (the `nextCursor` of the previous page:
   * the position after its last entry) makes a page one range read of `limit` entries wherever it is.
   */
  async page(agentId: string, page: number, limit: number, cursor?: string): Promise<HistoryPage> {
    await this.waitFor(this.log.head());
    const prefix = agentPrefix(agentId);
    const end = `${prefix.slice(0, -1)}0`;
    const at = cursor === undefined ? end : prefix + decodeHistoryCursor(cursor);
    const skip = page * limit;
    const rows = await this.kv.range<StoredHistoryEntry>({ gte: prefix, lt: at < end ? at : end, reverse: true, limit: skip + limit + 1 });
    const total = (await this.definition.loadCount(this.kv, agentId)).total;
    const shown = rows.slice(skip, skip + limit);
    const last = shown[shown.length - 1];
    return {
      entries: shown.map(([, v]) => v.entry),
      pagination: { page, limit, total, totalPages: Math.ceil(total / limit) },
      ...(rows.length > skip + limit ? { nextCursor: Buffer.from(last[0].slice(prefix.length), 'utf8').toString('base64url') } : {}),
    };
  }
}
