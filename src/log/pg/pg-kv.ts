/**
 * The kv side store of the PostgreSQL log: `el_kv` rows of this node's scope. Puts and dels ride
 * the next group commit (same transaction as the batch's records); until it commits they sit in an
 * overlay that `get` and `range` consult, so a projection reading right after its own write sees it.
 * Keys are stored as UTF-8 bytes (`bytea`): read models separate key parts with U+0000.
 */
import type pg from 'pg';
import { compareCodePoints } from '../key-codec.js';
import { assertName, encodeKvValue, mergePending, normalizeLimit, type PendingKvEntry } from '../kv-codec.js';
import type { KeyValueStore } from '../types.js';
import type { PgBatch } from './pg-commit.js';

type OverlayEntry = PendingKvEntry;

/** Keys are stored as their UTF-8 bytes: byte order is code point order, and U+0000 is allowed. */
const bytes = (key: string) => Buffer.from(key, 'utf8');

export class PgKv implements KeyValueStore {
  private readonly overlay = new Map<string, OverlayEntry>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly scope: string,
    private readonly writable: () => PgBatch,
    private readonly readable: () => void,
  ) {}

  async get<T = unknown>(key: string): Promise<T | undefined> {
    this.readable();
    assertName(key, 'kv key');
    const pending = this.overlay.get(key);
    if (pending) return pending.json === undefined ? undefined : (JSON.parse(pending.json) as T);
    const r = await this.pool.query<{ value: string }>('SELECT value FROM el_kv WHERE scope = $1 AND key = $2', [this.scope, bytes(key)]);
    return r.rows.length ? (JSON.parse(r.rows[0].value) as T) : undefined;
  }

  put(key: string, value: unknown): Promise<void> {
    try {
      const json = encodeKvValue(key, value);
      const batch = this.writable();
      batch.kv.set(key, json);
      return this.track(batch, key, { json });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  del(key: string): Promise<void> {
    try {
      assertName(key, 'kv key');
      const batch = this.writable();
      batch.kv.set(key, undefined);
      return this.track(batch, key, { json: undefined });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private track(batch: PgBatch, key: string, entry: OverlayEntry): Promise<void> {
    this.overlay.set(key, entry);
    return batch.wait().finally(() => {
      // A later write of the same key owns the overlay slot until its own batch commits.
      if (this.overlay.get(key) === entry) this.overlay.delete(key);
    });
  }

  async range<T = unknown>(opts: { gte: string; lt: string; reverse?: boolean; limit?: number }): Promise<Array<[string, T]>> {
    this.readable();
    const { gte, lt } = opts;
    assertName(gte, 'kv range bound');
    assertName(lt, 'kv range bound');
    const limit = normalizeLimit(opts.limit);
    if (limit === 0 || compareCodePoints(gte, lt) >= 0) return [];
    const pending: Array<[string, OverlayEntry]> = [];
    for (const e of this.overlay) if (compareCodePoints(e[0], gte) >= 0 && compareCodePoints(e[0], lt) < 0) pending.push(e);
    // Each pending entry can hide at most one stored entry: reading that many more is enough.
    const r = await this.pool.query<[Buffer, string]>({
      text: `SELECT key, value FROM el_kv WHERE scope = $1 AND key >= $2 AND key < $3 ORDER BY key ${opts.reverse ? 'DESC' : 'ASC'} LIMIT $4`,
      values: [this.scope, bytes(gte), bytes(lt), limit === Infinity ? null : limit + pending.length],
      rowMode: 'array',
    });
    if (pending.length === 0) return r.rows.map(([k, v]) => [k.toString('utf8'), JSON.parse(v) as T]);
    return mergePending<T>(r.rows.map(([k, v]) => [k.toString('utf8'), v]), pending, opts.reverse === true, limit);
  }
}
