/**
 * Key codec of the LevelDB log: turns sequence numbers and stream/kv names into byte keys whose
 * byte order (what LevelDB sorts by) equals the order callers mean.
 *
 * - Sequences are fixed-width 8-byte big-endian unsigned integers, so byte order is numeric order
 *   for every safe integer (0 .. 2^53-1).
 * - Strings (stream ids, kv keys, checkpoint names) are UTF-8. UTF-8 byte order equals Unicode
 *   code point order, which is what `compareCodePoints` implements for the in-memory log.
 * - Stream index keys are `prefix + utf8(stream) + 0x00 + seq8`; stream ids may not contain NUL,
 *   so the 0x00 separator sorts before every continuation and `"a"`'s keys never interleave with
 *   `"ab"`'s.
 *
 * Key spaces (one prefix byte each) live in one LevelDB: see `KeySpace`. What makes a valid stream
 * id, and the code point order every store sorts by, are store-neutral (../names.ts).
 */

export const SEQ_BYTES = 8;
const TWO_32 = 4294967296;

/** One-byte prefixes separating the key spaces of the log database. */
export const KeySpace = {
  /** records by global seq: `r` + seq8 → record JSON */
  record: 0x72,
  /** per-stream index: `s` + stream + 0x00 + streamSeq8 → "globalSeq count" of one append */
  stream: 0x73,
  /** projection checkpoints: `c` + name → decimal seq */
  checkpoint: 0x63,
  /** key/value side store: `k` + key → JSON */
  kv: 0x6b,
  /** log metadata (format version): `m` + name */
  meta: 0x6d,
} as const;

function assertSeq(n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`Sequence must be a safe non-negative integer, got ${n}`);
}

/** Writes `n` as 8 big-endian bytes at `offset`. */
function writeSeq(buf: Uint8Array, offset: number, n: number): void {
  // Two 32-bit halves: cheaper than BigInt and exact for every safe integer.
  const hi = Math.floor(n / TWO_32);
  const lo = n >>> 0;
  buf[offset] = hi >>> 24;
  buf[offset + 1] = (hi >>> 16) & 0xff;
  buf[offset + 2] = (hi >>> 8) & 0xff;
  buf[offset + 3] = hi & 0xff;
  buf[offset + 4] = lo >>> 24;
  buf[offset + 5] = (lo >>> 16) & 0xff;
  buf[offset + 6] = (lo >>> 8) & 0xff;
  buf[offset + 7] = lo & 0xff;
}

/** Reads 8 big-endian bytes at `offset` as a number. */
export function readSeq(buf: Uint8Array, offset: number): number {
  const hi = ((buf[offset] << 24) | (buf[offset + 1] << 16) | (buf[offset + 2] << 8) | buf[offset + 3]) >>> 0;
  const lo = ((buf[offset + 4] << 24) | (buf[offset + 5] << 16) | (buf[offset + 6] << 8) | buf[offset + 7]) >>> 0;
  return hi * TWO_32 + lo;
}

/** 8-byte big-endian encoding of a sequence number. */
export function encodeSeq(n: number): Buffer {
  assertSeq(n);
  const buf = Buffer.allocUnsafe(SEQ_BYTES);
  writeSeq(buf, 0, n);
  return buf;
}

export function decodeSeq(buf: Uint8Array): number {
  if (buf.length !== SEQ_BYTES) throw new RangeError(`A sequence key has ${SEQ_BYTES} bytes, got ${buf.length}`);
  return readSeq(buf, 0);
}

/** `r` + seq8: the key of a record. Hot path: no validation beyond what callers already did. */
export function recordKey(seq: number): Buffer {
  const buf = Buffer.allocUnsafe(1 + SEQ_BYTES);
  buf[0] = KeySpace.record;
  writeSeq(buf, 1, seq);
  return buf;
}

export function decodeRecordKey(key: Uint8Array): number {
  if (key.length !== 1 + SEQ_BYTES || key[0] !== KeySpace.record) throw new RangeError('Not a record key');
  return readSeq(key, 1);
}

/**
 * `s` + utf8(stream) + 0x00: the prefix of every index key of `stream` (computed once per stream).
 * Allocated outside Node's shared 8 KiB Buffer pool: the log caches prefixes of thousands of streams, and a
 * pooled slice would keep its whole slab alive (10,000 cached heads held ~30 MiB of slabs).
 */
export function streamPrefix(stream: string): Buffer {
  const len = Buffer.byteLength(stream, 'utf8');
  const buf = Buffer.allocUnsafeSlow(len + 2);
  buf[0] = KeySpace.stream;
  buf.write(stream, 1, 'utf8');
  buf[len + 1] = 0;
  return buf;
}

/** Index key: the stream prefix followed by the stream seq. */
export function streamKey(prefix: Buffer, streamSeq: number): Buffer {
  const buf = Buffer.allocUnsafe(prefix.length + SEQ_BYTES);
  prefix.copy(buf, 0);
  writeSeq(buf, prefix.length, streamSeq);
  return buf;
}

/** Splits an index key into its stream id and stream seq. */
export function decodeStreamKey(key: Uint8Array): { stream: string; streamSeq: number } {
  const end = key.length - SEQ_BYTES - 1;
  if (key[0] !== KeySpace.stream || end < 1 || key[end] !== 0) throw new RangeError('Not a stream index key');
  return {
    stream: Buffer.from(key.buffer, key.byteOffset + 1, end - 1).toString('utf8'),
    streamSeq: readSeq(key, end + 1),
  };
}

/** A prefix byte followed by a UTF-8 string (kv keys, checkpoint names, stream-id prefixes). */
export function stringKey(space: number, s: string): Buffer {
  const len = Buffer.byteLength(s, 'utf8');
  const buf = Buffer.allocUnsafe(len + 1);
  buf[0] = space;
  buf.write(s, 1, 'utf8');
  return buf;
}

export function decodeStringKey(key: Uint8Array): string {
  return Buffer.from(key.buffer, key.byteOffset + 1, key.length - 1).toString('utf8');
}

/** The smallest key greater than every key that starts with `prefix` (for exclusive upper bounds). */
export function prefixEnd(prefix: Buffer): Buffer {
  const out = Buffer.from(prefix);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] < 0xff) {
      out[i]++;
      return out.subarray(0, i + 1);
    }
  }
  // Only 0xff bytes: no finite upper bound in the space; the caller's prefix byte is never 0xff.
  throw new RangeError('Prefix has no upper bound');
}
