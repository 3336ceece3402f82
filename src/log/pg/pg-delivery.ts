/**
 * In-order delivery on one node of the shared PostgreSQL log. `delivered` is the last global
 * sequence handed, with no gap, to the node's live subscribers; it is the log's `head()`. It moves
 * towards `target` (the highest sequence known to be committed) from this node's own commits, whose
 * records are published as they are, and from other nodes' commits, whose records are read from
 * `el_events` first (or skipped over when nobody subscribes). Commits hold the head row until they
 * are visible, so every sequence up to a known head is committed and readable, unless retention
 * removed it (pg-removal.ts): a sequence missing from a read of committed sequences is a removed
 * record, skipped as LevelDB's reads skip removed keys. A node behind a removal thus never waits for
 * the removed records; it delivers the rest, the `retention.removed` record among them.
 *
 * Other nodes' records are read only as far as live subscribers need them (`RecordInterest`): all
 * of them, those a filter names (the read asks the database for those alone), or none, in which
 * case the range is passed over without a query. A read that does not take every record would also
 * leave out this node's own records of a commit whose reply is not in yet (the NOTIFY of a commit
 * can overtake its reply), so such a read or skip stops at `ownFloor()`: the head known when the
 * commit in flight was sent, below which none of its records can lie. The commit's reply then hands
 * its records over and the pump goes on.
 */
import type { ReadFilter, SubscriptionHub } from '../subscriptions.js';
import type { LogRecord } from '../types.js';

/** Records read per query while catching up with other nodes' commits. */
const CHUNK = 1024;

interface OwnBatch {
  last: number;
  records: LogRecord[];
}

export class InOrderDelivery {
  private delivered: number;
  private target: number;
  /** this node's committed records not yet delivered, by first sequence */
  private readonly own = new Map<number, OwnBatch>();
  /** waiting for `delivered` to reach `seq`, in sequence order */
  private waiters: Array<{ seq: number; resolve: () => void }> = [];
  private pumping = false;

  constructor(
    head: number,
    private readonly hub: SubscriptionHub,
    /** records with `after < seq <= upto`, at most `limit`, in order (those `filter` names, or all) */
    private readonly read: (after: number, upto: number, limit: number, filter?: ReadFilter) => Promise<LogRecord[]>,
    private readonly stopped: () => boolean,
    /** a read of other nodes' records failed (the log decides whether that is a store fault or worth a warning) */
    private readonly onReadError: (err: unknown) => void,
    /** the global head known when this node's commit in flight was sent (+Infinity: none in flight) */
    private readonly ownFloor: () => number = () => Number.POSITIVE_INFINITY,
  ) {
    this.delivered = head;
    this.target = head;
  }

  /** Other nodes' records: ranges read, records they returned, ranges passed over unread. */
  readonly stats = { reads: 0, records: 0, skipped: 0 };

  /** The highest sequence known to be committed. */
  get known(): number {
    return this.target;
  }

  get head(): number {
    return this.delivered;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** A sequence known to be committed (a NOTIFY payload, a poll, a commit). */
  noteHead(seq: number): void {
    if (seq > this.target) this.target = seq;
    if (this.target > this.delivered) void this.pump();
  }

  /** This node committed `records` (consecutive sequences): deliver them without reading them back. */
  ownCommit(records: LogRecord[]): void {
    const last = records[records.length - 1].seq;
    // the tail may already have delivered part of it (its NOTIFY can overtake our own reply)
    const pending = records[0].seq > this.delivered ? records : records.filter((r) => r.seq > this.delivered);
    if (pending.length > 0) this.own.set(pending[0].seq, { last, records: pending });
    this.noteHead(last);
  }

  /** Resolves once everything up to `seq` is delivered. */
  until(seq: number): Promise<void> {
    if (this.delivered >= seq) return Promise.resolve();
    return new Promise((resolve) => {
      // appends add theirs in order; a read barrier's may land anywhere
      let i = this.waiters.length;
      while (i > 0 && this.waiters[i - 1].seq > seq) i--;
      this.waiters.splice(i, 0, { seq, resolve });
      this.noteHead(seq);
    });
  }

  /** Moves `delivered` towards `target` in order. One pump at a time; a failed read retries on the next hint. */
  async pump(): Promise<void> {
    if (this.pumping || this.stopped()) return;
    this.pumping = true;
    try {
      while (this.delivered < this.target && !this.stopped()) {
        const mine = this.own.get(this.delivered + 1);
        if (mine) {
          this.own.delete(this.delivered + 1);
          this.advance(mine.records, mine.last);
          continue;
        }
        // other nodes' records, up to this node's next own batch (or the target)
        let upto = this.target;
        for (const k of this.own.keys()) if (k > this.delivered && k - 1 < upto) upto = k - 1;
        if (this.hub.live.size === 0) {
          this.advance([], upto);
          continue;
        }
        const want = this.hub.foreignInterest();
        if (want !== 'all') {
          // this node's records of the commit in flight lie above its floor: not passed unread
          upto = Math.min(upto, this.ownFloor());
          if (upto <= this.delivered) break;
          if (want === undefined) {
            this.stats.skipped++;
            this.advance([], upto, true);
            continue;
          }
        }
        const rows = await this.read(this.delivered, upto, CHUNK, want === 'all' ? undefined : want);
        this.stats.reads++;
        this.stats.records += rows.length;
        if (this.stopped()) return;
        // a short read covers the whole range: what it lacks was removed; a full one ends at its last row
        const fresh = rows.filter((r) => r.seq > this.delivered);
        this.advance(fresh, rows.length < CHUNK ? upto : rows[rows.length - 1].seq, true, want !== 'all');
      }
    } catch (err) {
      if (!this.stopped()) this.onReadError(err);
    } finally {
      this.pumping = false;
    }
  }

  /**
   * Publishes `records` (all of delivered+1..to, or none when nobody listens; `read`: all that a read
   * of that range found, the rest removed or not asked for; `foreignOnly`: a filtered read, other
   * nodes' records alone) and moves the head.
   */
  private advance(records: LogRecord[], to: number, read = false, foreignOnly = false): void {
    if (read) this.hub.publishRead(records, to, foreignOnly);
    else if (records.length > 0) this.hub.publish(records);
    this.delivered = to;
    // own batches the tail delivered from the database meanwhile are done
    for (const [first, batch] of this.own) if (batch.last <= to) this.own.delete(first);
    let i = 0;
    const waiters = this.waiters;
    while (i < waiters.length && waiters[i].seq <= to) waiters[i++].resolve();
    if (i > 0) this.waiters = waiters.slice(i);
  }
}
