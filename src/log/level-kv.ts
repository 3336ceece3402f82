/**
 * The kv side store of the LevelDB log (`k` + key → JSON). Puts and dels ride the next group
 * commit; until their batch is durable they sit in an overlay that `get` and `range` consult, so a
 * projection reading right after its own write (without awaiting it) sees that write.
 */
import type { ClassicLevel } from 'classic-level';
import type { PendingBatch } from './group-commit.js';
import { KeySpace, compareCodePoints, decodeStringKey, stringKey } from './key-codec.js';
import { assertName, encodeKvValue, mergePending, normalizeLimit } from './kv-codec.js';
import type { KeyValueStore } from './types.js';

interface OverlayEntry {
  /** JSON of the pending value, undefined for a pending delete */
  json: string | undefined;
}

export class LevelKv implements KeyValueStore {
  private readonly overlay = new Map<string, OverlayEntry>();

  constructor(
    private readonly db: ClassicLevel<Buffer, string>,
    private readonly writable: () => PendingBatch<unknown>,
    private readonly readable: () => void,
  ) {}

  async get<T = unknown>(key: string): Promise<T | undefined> {
    this.readable();
    assertName(key, 'kv key');
    const pending = this.overlay.get(key);
    if (pending) return pending.json === undefined ? undefined : (JSON.parse(pending.json) as T);
    const json = await this.db.get(stringKey(KeySpace.kv, key));
    return json === undefined ? undefined : (JSON.parse(json) as T);
  }

  put(key: string, value: unknown): Promise<void> {
    try {
      const json = encodeKvValue(key, value);
      const batch = this.writable();
      batch.put(stringKey(KeySpace.kv, key), json);
      return this.track(batch, key, { json });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  del(key: string): Promise<void> {
    try {
      assertName(key, 'kv key');
      const batch = this.writable();
      batch.del(stringKey(KeySpace.kv, key));
      return this.track(batch, key, { json: undefined });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private track(batch: PendingBatch<unknown>, key: string, entry: OverlayEntry): Promise<void> {
    batch.kvWrites++;
    this.overlay.set(key, entry);
    return batch.wait<void>(undefined).finally(() => {
      // A later write of the same key owns the overlay slot until its own batch is durable.
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
    const stored = await this.db
      .iterator({
        gte: stringKey(KeySpace.kv, gte),
        lt: stringKey(KeySpace.kv, lt),
        reverse: opts.reverse === true,
        limit: limit === Infinity ? -1 : limit + pending.length,
      })
      .all();
    if (pending.length === 0) return stored.map(([k, v]) => [decodeStringKey(k), JSON.parse(v) as T]);
    return mergePending<T>(stored.map(([k, v]) => [decodeStringKey(k), v]), pending, opts.reverse === true, limit);
  }
}
