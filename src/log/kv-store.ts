/**
 * The key/value side store's contract (`EventLog.kv`, `SharedReadModelsCapability.kv`), in a file of
 * its own so that the capabilities can name it without importing the log's types.
 */

/**
 * A small ordered key/value store used by persisted projections (indexes of executions,
 * conversations, ...). Keys are strings compared by byte order; `put`/`del` become part of the
 * next group commit so projections stay cheap.
 */
export interface KeyValueStore {
  get<T = unknown>(key: string): Promise<T | undefined>;
  /** The values of several keys, in their order (undefined where absent): one read of the store, not one per key. */
  getMany<T = unknown>(keys: readonly string[]): Promise<Array<T | undefined>>;
  put(key: string, value: unknown): Promise<void>;
  /** `put` of a value already encoded as JSON by `encodeKvValue` (a projection writing one value under several keys encodes it once). */
  putEncoded(key: string, json: string): Promise<void>;
  del(key: string): Promise<void>;
  /**
   * Puts (JSON from `encodeKvValue`) and deletes (`undefined`) issued together, in order: one write
   * into the store's next batch and one promise for all of them (a projection's fold), where a call
   * per key costs a promise or three each.
   */
  writeMany(entries: ReadonlyArray<readonly [key: string, json: string | undefined]>): Promise<void>;
  /**
   * Entries with `gte <= key < lt`, in key order (or reverse), at most `limit`. `once`: a read made
   * once (a start loading a snapshot), kept out of the store's read cache so it does not push out
   * what point reads use, nor stay resident.
   */
  range<T = unknown>(opts: KvRangeOptions): Promise<Array<[string, T]>>;
}

export interface KvRangeOptions {
  gte: string;
  lt: string;
  reverse?: boolean;
  limit?: number;
  once?: boolean;
}
