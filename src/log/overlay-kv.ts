/**
 * The key/value side store every durable log offers (`EventLog.kv`), written once for all of them:
 * puts and dels ride the log's next group commit, and until their batch is durable they sit in an
 * overlay that `get` and `range` consult, so a projection reading right after its own write (without
 * awaiting it) sees that write. A log supplies only how to read what is stored and how to add a
 * write to its next batch.
 */
import { compareCodePoints } from './names.js';
import { assertName, encodeKvValue, mergePending, normalizeLimit, type PendingKvEntry } from './kv-codec.js';
import type { KeyValueStore, KvRangeOptions } from './types.js';

export abstract class OverlayKv implements KeyValueStore {
  private readonly overlay = new Map<string, PendingKvEntry>();

  protected constructor(private readonly readable: () => void) {}

  /** The stored JSON of `key` (what is durable, overlay aside). */
  protected abstract readStored(key: string): Promise<string | undefined>;
  /** The stored JSON of each key, in order (one read of the store). */
  protected abstract readStoredMany(keys: readonly string[]): Promise<Array<string | undefined>>;
  /** Stored `[key, json]` entries with `gte <= key < lt`, in key order (or reverse), at most `limit` (Infinity: all). */
  protected abstract readStoredRange(gte: string, lt: string, reverse: boolean, limit: number, once: boolean): Promise<Array<[string, string]>>;
  /** Adds puts (`json`) and deletes (undefined) to the log's next batch, in order; resolves once that batch is durable. */
  protected abstract write(entries: ReadonlyArray<readonly [key: string, json: string | undefined]>): Promise<void>;

  async get<T = unknown>(key: string): Promise<T | undefined> {
    this.readable();
    assertName(key, 'kv key');
    const pending = this.overlay.get(key);
    const json = pending ? pending.json : await this.readStored(key);
    return json === undefined ? undefined : (JSON.parse(json) as T);
  }

  async getMany<T = unknown>(keys: readonly string[]): Promise<Array<T | undefined>> {
    this.readable();
    const out = new Array<T | undefined>(keys.length);
    const stored: string[] = [];
    const at: number[] = [];
    keys.forEach((key, i) => {
      assertName(key, 'kv key');
      const pending = this.overlay.get(key);
      if (pending) out[i] = pending.json === undefined ? undefined : (JSON.parse(pending.json) as T);
      else {
        stored.push(key);
        at.push(i);
      }
    });
    if (stored.length > 0) {
      const jsons = await this.readStoredMany(stored);
      jsons.forEach((json, j) => (out[at[j]] = json === undefined ? undefined : (JSON.parse(json) as T)));
    }
    return out;
  }

  put(key: string, value: unknown): Promise<void> {
    let json: string;
    try {
      json = encodeKvValue(key, value);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.writeMany([[key, json]]);
  }

  putEncoded(key: string, json: string): Promise<void> {
    return this.writeMany([[key, json]]);
  }

  del(key: string): Promise<void> {
    return this.writeMany([[key, undefined]]);
  }

  writeMany(entries: ReadonlyArray<readonly [key: string, json: string | undefined]>): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    let durable: Promise<void>;
    try {
      for (const [key] of entries) assertName(key, 'kv key');
      // a closed or failed log refuses the write here: the caller gets a rejection, never a throw
      durable = this.write(entries);
    } catch (err) {
      return Promise.reject(err);
    }
    const pending = new Array<PendingKvEntry>(entries.length);
    for (let i = 0; i < entries.length; i++) {
      pending[i] = { json: entries[i][1] };
      this.overlay.set(entries[i][0], pending[i]);
    }
    return durable.finally(() => {
      // a later write of the same key owns its overlay slot until its own batch is durable
      for (let i = 0; i < entries.length; i++) {
        const key = entries[i][0];
        if (this.overlay.get(key) === pending[i]) this.overlay.delete(key);
      }
    });
  }

  async range<T = unknown>(opts: KvRangeOptions): Promise<Array<[string, T]>> {
    this.readable();
    const { gte, lt } = opts;
    assertName(gte, 'kv range bound');
    assertName(lt, 'kv range bound');
    const limit = normalizeLimit(opts.limit);
    if (limit === 0 || compareCodePoints(gte, lt) >= 0) return [];
    const pending: Array<[string, PendingKvEntry]> = [];
    for (const e of this.overlay) if (compareCodePoints(e[0], gte) >= 0 && compareCodePoints(e[0], lt) < 0) pending.push(e);
    // Each pending entry can hide at most one stored entry: reading that many more is enough.
    const stored = await this.readStoredRange(gte, lt, opts.reverse === true, limit === Infinity ? Infinity : limit + pending.length, opts.once === true);
    if (pending.length === 0) return stored.map(([k, v]) => [k, JSON.parse(v) as T]);
    return mergePending<T>(stored, pending, opts.reverse === true, limit);
  }
}
