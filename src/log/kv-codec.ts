/**
 * Validation shared by both EventLog implementations for names (kv keys, checkpoint names) and kv
 * values, so the in-memory log refuses exactly what the LevelDB log refuses.
 */
import { compareCodePoints, isWellFormed } from './names.js';

export function assertName(name: unknown, what: string): asserts name is string {
  if (typeof name !== 'string') throw new TypeError(`A ${what} must be a string`);
  if (!isWellFormed(name)) throw new TypeError(`A ${what} may not contain lone surrogates`);
}

/** Validates a kv write and returns the value's JSON. */
export function encodeKvValue(key: string, value: unknown): string {
  assertName(key, 'kv key');
  if (value === undefined) throw new TypeError(`kv.put(${JSON.stringify(key)}) needs a value; use kv.del to remove a key`);
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    throw new TypeError(`kv.put(${JSON.stringify(key)}): the value is not JSON-serialisable: ${(err as Error).message}`);
  }
  if (json === undefined) throw new TypeError(`kv.put(${JSON.stringify(key)}): the value is not JSON-serialisable`);
  return json;
}

export function assertCheckpoint(name: unknown, seq: unknown): asserts name is string {
  assertName(name, 'checkpoint name');
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) {
    throw new RangeError(`A checkpoint must be a non-negative integer, got ${String(seq)}`);
  }
}

/** `limit` as the kv contract means it: undefined or negative = no limit. */
export function normalizeLimit(limit: number | undefined): number {
  return limit === undefined || limit < 0 ? Infinity : limit;
}

/** A kv write not yet durable: the JSON of the value, or undefined for a delete. */
export interface PendingKvEntry {
  json: string | undefined;
}

/**
 * Entries of a kv range as readers must see them: stored entries (`[key, json]`, read with
 * `limit + pending.length` so that pending deletes cannot starve the page) overlaid with the
 * pending writes of the range, in code point order (or reverse), at most `limit`.
 */
export function mergePending<T>(stored: Array<[string, string]>, pending: Array<[string, PendingKvEntry]>, reverse: boolean, limit: number): Array<[string, T]> {
  const merged = new Map<string, string>(stored);
  for (const [k, e] of pending) {
    if (e.json === undefined) merged.delete(k);
    else merged.set(k, e.json);
  }
  const keys = [...merged.keys()].sort(compareCodePoints);
  if (reverse) keys.reverse();
  return keys.slice(0, limit === Infinity ? keys.length : limit).map((k) => [k, JSON.parse(merged.get(k)!) as T]);
}
