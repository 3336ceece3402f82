/**
 * The agent-history projection: `GET /agents/:id/history` read from the log's key/value store, fed
 * by every committed record (catch-up from its checkpoint, then live). Nothing lives only on the
 * heap: in memory are just the entries of runs in flight and the entries changed since the last
 * flush, which happens once per event-loop turn (so a burst of records becomes one kv write per run).
 *
 * kv layout (`h` = `agent-history`):
 * - `h/e/<agentId>/<startSeq, 16 digits>` → StoredHistoryEntry (reverse range = newest first)
 * - `h/r/<runId>` → entry key, only while the run is working (the boot-time scan of interrupted runs)
 * - `h/n/<agentId>` → `{total, seq}` entries per agent (`seq` makes the count idempotent)
 * Checkpoint `agent-history` = last global sequence applied and flushed.
 */
import type { EventLog, LogRecord, Subscription } from '../log/types.js';
import { applyHistoryRecord, isTerminalStatus, type HistoryEntry, type StoredHistoryEntry } from './agent-history-entry.js';

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
}

export interface AgentHistoryOptions {
  onError?: (err: unknown) => void;
}

export class AgentHistoryProjection {
  /** entries of runs in flight (and terminal ones until flushed), by stream */
  private readonly live = new Map<string, StoredHistoryEntry>();
  private readonly counts = new Map<string, Count>();
  private readonly dirty = new Set<string>();
  private readonly dirtyCounts = new Set<string>();
  /** in-flight runs whose `h/r/<runId>` pointer is in the kv store */
  private readonly pointed = new Set<string>();
  private readonly queue: LogRecord[] = [];
  private draining = false;
  private flushScheduled = false;
  /** last global sequence applied to the in-memory state */
  private applied = 0;
  /** last global sequence whose effects are written to the kv store */
  private flushed = 0;
  private flushing: Promise<void> = Promise.resolve();
  private waiters: Array<{ seq: number; resolve: () => void }> = [];
  private sub: Subscription | undefined;

  constructor(private readonly log: EventLog, private readonly options: AgentHistoryOptions = {}) {}

  /** Catches up from the checkpoint; resolves once everything committed before the call is flushed. */
  async start(): Promise<void> {
    const checkpoint = await this.log.getCheckpoint(NAME);
    this.applied = this.flushed = checkpoint;
    const target = this.log.head();
    this.sub = this.log.subscribe(checkpoint, (r) => this.onRecord(r));
    await this.waitFor(target);
  }

  /** Stops following the log after writing what was applied (call before the log closes). */
  async stop(): Promise<void> {
    this.sub?.unsubscribe();
    this.sub = undefined;
    while (this.draining) await new Promise((r) => setImmediate(r));
    await this.flushing;
    this.flushing = this.flushing.then(() => this.flush()).catch((err) => this.options.onError?.(err));
    await this.flushing;
  }

  /** Resolves once every record with `seq <= seq` is applied and written. */
  waitFor(seq: number): Promise<void> {
    if (this.flushed >= seq) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  /** Run ids whose last record left them working (used at boot to close interrupted runs). */
  async workingRuns(): Promise<string[]> {
    const rows = await this.log.kv.range<string>({ gte: `${P}/r/`, lt: `${P}/r0` });
    return rows.map(([k]) => k.slice(`${P}/r/`.length));
  }

  /** One page of an agent's history, newest first. `page` is 0-based. */
  async page(agentId: string, page: number, limit: number): Promise<HistoryPage> {
    await this.waitFor(this.log.head());
    const prefix = agentPrefix(agentId);
    const rows = await this.log.kv.range<StoredHistoryEntry>({ gte: prefix, lt: `${prefix.slice(0, -1)}0`, reverse: true, limit: (page + 1) * limit });
    const total = (await this.loadCount(agentId)).total;
    return {
      entries: rows.slice(page * limit).map(([, v]) => v.entry),
      pagination: { page, limit, total, totalPages: Math.ceil(total / limit) },
    };
  }

  private onRecord(r: LogRecord): void {
    if (!r.stream.startsWith(RUN_PREFIX)) {
      if (!this.draining && this.queue.length === 0) {
        this.applied = r.seq;
        this.scheduleFlush();
      } else this.queue.push(r);
      return;
    }
    this.queue.push(r);
    if (!this.draining) void this.drain();
  }

  /** Applies queued records in order; synchronous unless an entry or count must be read from kv. */
  private async drain(): Promise<void> {
    this.draining = true;
    while (this.queue.length > 0) {
      const r = this.queue[0];
      if (r.stream.startsWith(RUN_PREFIX)) {
        try {
          await this.apply(r);
        } catch (err) {
          // one bad record must not stop the projection: report it and go on
          this.options.onError?.(err);
        }
      }
      this.queue.shift();
      this.applied = r.seq;
    }
    this.draining = false;
    this.scheduleFlush();
  }

  private async apply(r: LogRecord): Promise<void> {
    let current = this.live.get(r.stream);
    if (!current && r.type !== 'run.started') {
      current = await this.loadEntry(r.stream);
      if (current) this.pointed.add(r.stream);
    }
    const next = applyHistoryRecord(current, r);
    if (!next || next === current) return;
    if (r.type === 'run.started' && (!current || current.seq < r.seq)) {
      const c = this.counts.get(next.agentId);
      if (c) this.bump(c, next.agentId, r.seq);
      else this.bump(await this.loadCount(next.agentId), next.agentId, r.seq);
    }
    this.live.set(r.stream, next);
    this.dirty.add(r.stream);
  }

  private async loadEntry(stream: string): Promise<StoredHistoryEntry | undefined> {
    const key = await this.log.kv.get<string>(runKey(stream.slice(RUN_PREFIX.length)));
    if (key === undefined) return undefined;
    return this.log.kv.get<StoredHistoryEntry>(key);
  }

  private async loadCount(agentId: string): Promise<Count> {
    let c = this.counts.get(agentId);
    if (!c) {
      c = (await this.log.kv.get<Count>(countKey(agentId))) ?? { total: 0, seq: 0 };
      // a concurrent loader may have won while we waited
      c = this.counts.get(agentId) ?? c;
      this.counts.set(agentId, c);
    }
    return c;
  }

  private bump(c: Count, agentId: string, seq: number): void {
    if (c.seq >= seq) return;
    c.total += 1;
    c.seq = seq;
    this.dirtyCounts.add(agentId);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flushing = this.flushing.then(() => this.flush()).catch((err) => this.options.onError?.(err));
    });
  }

  private async flush(): Promise<void> {
    const upto = this.applied;
    const kv = this.log.kv;
    const writes: Array<Promise<void>> = [];
    for (const stream of this.dirty) {
      const s = this.live.get(stream)!;
      const key = entryKey(s.agentId, s.startSeq);
      writes.push(kv.put(key, s));
      const runId = stream.slice(RUN_PREFIX.length);
      if (isTerminalStatus(s.entry.status)) {
        // a run that started and ended within one flush never had a pointer
        if (this.pointed.delete(stream)) writes.push(kv.del(runKey(runId)));
        this.live.delete(stream);
      } else if (!this.pointed.has(stream)) {
        writes.push(kv.put(runKey(runId), key));
        this.pointed.add(stream);
      }
    }
    this.dirty.clear();
    for (const agentId of this.dirtyCounts) writes.push(kv.put(countKey(agentId), this.counts.get(agentId)));
    this.dirtyCounts.clear();
    if (upto > this.flushed) writes.push(this.log.setCheckpoint(NAME, upto));
    await Promise.all(writes);
    if (upto > this.flushed) this.flushed = upto;
    if (this.waiters.length > 0) {
      const ready = this.waiters.filter((w) => w.seq <= this.flushed);
      this.waiters = this.waiters.filter((w) => w.seq > this.flushed);
      for (const w of ready) w.resolve();
    }
  }
}
