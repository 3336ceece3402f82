/**
 * Names every store accepts and the order every store sorts them in: what a stream id may be, and
 * comparison by Unicode code point (UTF-8 byte order, which LevelDB sorts by and PostgreSQL's
 * `bytea` keys follow), so the memory, LevelDB and PostgreSQL logs refuse and order the same.
 */

/** True when `stream` can be a stream id: a non-empty, well-formed string without NUL. */
export function isStreamId(stream: unknown): stream is string {
  return typeof stream === 'string' && stream.length > 0 && !stream.includes('\u0000') && isWellFormed(stream);
}

/** Throws when `stream` cannot be a stream id (empty, not a string, NUL or lone surrogates). */
export function assertStreamId(stream: unknown): asserts stream is string {
  if (typeof stream !== 'string' || stream.length === 0) throw new TypeError('A stream id must be a non-empty string');
  if (stream.includes('\u0000')) throw new TypeError('A stream id may not contain the NUL character');
  if (!isWellFormed(stream)) throw new TypeError('A stream id may not contain lone surrogates');
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * False when `s` holds a lone surrogate: UTF-8 encodes those as U+FFFD, so two different keys
 * would collide on disk. Names with them are refused rather than silently merged.
 */
export function isWellFormed(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}

/**
 * Compares strings by Unicode code point, i.e. by their UTF-8 byte order (JS `<` compares UTF-16
 * code units, which disagrees for astral characters vs U+E000..U+FFFF). The in-memory log uses it
 * so its kv and stream ordering match LevelDB's.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (U+D800..U+DFFF) encode code points above U+FFFF: they sort after every BMP unit.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs === ys) return x - y;
    return xs ? 1 : -1;
  }
  return a.length - b.length;
}
