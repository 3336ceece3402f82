/**
 * This node's lease on the PostgreSQL store: registered under its node id on open (a new epoch
 * each time the id registers), renewed every third of the lease, given up at once on close. When
 * the lease lapsed (the process was paused, the database unreachable) the node registers again under
 * a new epoch: streams other nodes claimed meanwhile stay theirs, and this node's appends to them
 * are refused inside the commit. A process whose node id another process registered since stays
 * fenced for good. Stream ownership queries (claim, takeover candidates, counts) live here too.
 * A renewal that fails because the database is out of reach is the store's fault state, reported
 * once through `onError` (the log's health), not a warning per attempt.
 */
import type pg from 'pg';
import type { Fencing } from '../capabilities.js';
import { registerNode, releaseLease, renewLease } from './schema.js';

export class NodeLease {
  private timer: NodeJS.Timeout | undefined;
  /** another process registered this node id: this one never registers again */
  private superseded = false;
  private stopped = false;
  /** the renewal in flight: the timer and the store's recovery share it, so a lapse registers once */
  private renewing: Promise<void> | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    readonly nodeId: string,
    private readonly leaseMs: number,
    private epoch: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  static async register(pool: pg.Pool, nodeId: string, leaseMs: number, onError: (err: unknown) => void): Promise<NodeLease> {
    return new NodeLease(pool, nodeId, leaseMs, await registerNode(pool, nodeId, leaseMs), onError);
  }

  get fencing(): Fencing {
    return { nodeId: this.nodeId, epoch: this.epoch };
  }

  start(): void {
    this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    try {
      await this.renewNow();
    } catch (err) {
      if (!this.stopped) this.onError(err);
    }
  }

  /**
   * One renewal now (registering again when the lease lapsed); throws when the database cannot be
   * reached. A call while one is in flight shares it: two renewals that both saw the lapse would
   * register twice, and the one resolving last could keep the older epoch, fencing this node out.
   */
  renewNow(): Promise<void> {
    if (this.stopped || this.superseded) return Promise.resolve();
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    const outcome = await renewLease(this.pool, this.nodeId, this.epoch, this.leaseMs);
    if (outcome === 'renewed' || this.stopped) return;
    if (outcome === 'superseded') {
      this.superseded = true;
      process.emitWarning(`Node id ${this.nodeId} was registered again by another process; this one (epoch ${this.epoch}) can no longer append to fenced streams`, 'EventLogLeaseWarning');
      return;
    }
    const before = this.epoch;
    this.epoch = await registerNode(this.pool, this.nodeId, this.leaseMs);
    process.emitWarning(`The lease of node ${this.nodeId} lapsed (epoch ${before}); registered again as epoch ${this.epoch}`, 'EventLogLeaseWarning');
  }

  /** undefined when `stream` is now this node's, else why not */
  async claim(stream: string): Promise<string | undefined> {
    const r = await this.pool.query<{ why: string | null }>('SELECT el_claim($1, $2, $3) AS why', [stream, this.nodeId, this.epoch]);
    return r.rows[0].why ?? undefined;
  }

  async lapsedStreams(prefix: string, limit: number): Promise<string[]> {
    const r = await this.pool.query<{ stream: string }>(
      `SELECT o.stream FROM el_owners o LEFT JOIN el_nodes n ON n.node_id = o.node_id
       WHERE o.stream >= $1 AND starts_with(o.stream, $1) AND strpos(substr(o.stream, length($1) + 1), '/') = 0
         AND (n.node_id IS NULL OR n.expires_at <= now() OR n.epoch <> o.node_epoch)
       ORDER BY o.stream LIMIT $2`,
      [prefix, limit],
    );
    return r.rows.map((row) => row.stream);
  }

  async liveOwners(streams: readonly string[]): Promise<Map<string, string>> {
    if (streams.length === 0) return new Map();
    const r = await this.pool.query<{ stream: string; node_id: string }>(
      `SELECT o.stream, o.node_id FROM el_owners o JOIN el_nodes n ON n.node_id = o.node_id
       WHERE o.stream = ANY($1::text[]) AND n.expires_at > now() AND n.epoch = o.node_epoch`,
      [streams],
    );
    return new Map(r.rows.map((row) => [row.stream, row.node_id]));
  }

  async liveNodes(): Promise<string[]> {
    const r = await this.pool.query<{ node_id: string }>('SELECT node_id FROM el_nodes WHERE expires_at > now() ORDER BY node_id');
    return r.rows.map((row) => row.node_id);
  }

  async ownedCounts(prefixes: readonly string[]): Promise<number[]> {
    const r = await this.pool.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM el_owners o WHERE o.node_id = $1 AND o.node_epoch = $2 AND starts_with(o.stream, p)) AS n
       FROM unnest($3::text[]) WITH ORDINALITY AS t(p, i) ORDER BY i`,
      [this.nodeId, this.epoch, prefixes],
    );
    return r.rows.map((row) => Number(row.n));
  }

  /** Stops renewing; `release` ends the lease at once so other nodes may claim its streams now. */
  async stop(release: boolean): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (release) await releaseLease(this.pool, this.nodeId, this.epoch).catch(() => undefined);
  }
}
