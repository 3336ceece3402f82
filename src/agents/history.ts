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
 * Checkpoint `agent-history` = last global sequence applied and flushed.
 */
import type { EventLog, KeyValueStore, LogRecord } from '../log/types.js';
import { invalidRequest } from '../errors.js';
import { ProjectionHandle, type ProjectionDefinition, type ProjectionWrites } from '../projections/runner.js';
import { applyHistoryRecord, isTerminalStatus, type HistoryEntry, type StoredHistoryEntry } from '../contract/agent-history-entry.js';

const NAME = 'agent-history';
const P = 'agent-history';
const pad = (n: number) => String(n).padStart(16, '0');
const agentPrefix = (agentId: string) => `${P}/e/${encodeURIComponent(agentId)}/`;
const entryKey = (agentId: string, startSeq: number) => `${agentPrefix(agentId)}${pad(startSeq)}`;
const runKey = (runId: string) => `${P}/r/${runId}`;
const countKey = (agentId: string) => `${P}/n/${encodeURIComponent(agentId)}`;
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
  readonly keyRange = { gte: `${P}/`, lt: `${P}0` };
  /** entries of runs in flight, by stream */
  private readonly live = new Map<string, StoredHistoryEntry>();
  readonly counts = new Map<string, Count>();
  /** in-flight runs whose `h/r/<runId>` pointer is in the kv store */
  private readonly pointed = new Set<string>();

  constructor(private readonly onError: (err: unknown) => void) {}

  accepts(r: LogRecord): boolean {
    return r.stream.startsWith(RUN_PREFIX);
  }

  reset(): void {
    this.live.clear();
    this.counts.clear();
    this.pointed.clear();
  }

  async apply(records: readonly LogRecord[], writes: ProjectionWrites, kv: KeyValueStore): Promise<void> {
    const dirty = new Set<string>();
    const dirtyCounts = new Set<string>();
    for (const r of records) {
      try {
        await this.fold(r, kv, dirty, dirtyCounts);
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

  /** Run ids whose last record left them working (used at boot to close interrupted runs). */
  async workingRuns(): Promise<string[]> {
    const rows = await this.log.kv.range<string>({ gte: `${P}/r/`, lt: `${P}/r0` });
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
    const rows = await this.log.kv.range<StoredHistoryEntry>({ gte: prefix, lt: at < end ? at : end, reverse: true, limit: skip + limit + 1 });
    const total = (await this.definition.loadCount(this.log.kv, agentId)).total;
    const shown = rows.slice(skip, skip + limit);
    const last = shown[shown.length - 1];
    return {
      entries: shown.map(([, v]) => v.entry),
      pagination: { page, limit, total, totalPages: Math.ceil(total / limit) },
      ...(rows.length > skip + limit ? { nextCursor: Buffer.from(last[0].slice(prefix.length), 'utf8').toString('base64url') } : {}),
    };
  }
}
