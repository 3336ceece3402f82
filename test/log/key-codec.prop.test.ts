import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRecordKey, decodeSeq, decodeStreamKey, encodeSeq, recordKey, streamKey, streamPrefix, stringKey, KeySpace } from '../../src/log/level/key-codec.js';
import { compareCodePoints, isWellFormed } from '../../src/log/names.js';

const sign = (n: number) => Math.sign(n);
const seqArb = fc.oneof(fc.maxSafeNat(), fc.nat({ max: 70_000 }), fc.constantFrom(0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1));
/** Any well-formed Unicode text, astral characters included. */
const textArb = fc.string({ unit: 'binary', maxLength: 12 });
const streamArb = textArb.filter((s) => s.length > 0 && !s.includes('\u0000'));

describe('key codec properties', () => {
  it('round-trips every safe sequence number', () => {
    fc.assert(
      fc.property(seqArb, (n) => {
        expect(decodeSeq(encodeSeq(n))).toBe(n);
        expect(decodeRecordKey(recordKey(n))).toBe(n);
      }),
    );
  });

  it('orders sequence keys by byte exactly as numbers order', () => {
    fc.assert(
      fc.property(seqArb, seqArb, (a, b) => {
        expect(sign(Buffer.compare(encodeSeq(a), encodeSeq(b)))).toBe(sign(a - b));
        expect(sign(Buffer.compare(recordKey(a), recordKey(b)))).toBe(sign(a - b));
      }),
    );
  });

  it('refuses numbers that are not safe non-negative integers', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ max: -1 }),
          fc.double().filter((d) => !Number.isSafeInteger(d)),
        ),
        (n) => {
          expect(() => encodeSeq(n)).toThrow(RangeError);
        },
      ),
    );
  });

  it('compares strings by code point, which is UTF-8 byte order', () => {
    fc.assert(
      fc.property(textArb, textArb, (a, b) => {
        expect(sign(compareCodePoints(a, b))).toBe(sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))));
        expect(sign(Buffer.compare(stringKey(KeySpace.kv, a), stringKey(KeySpace.kv, b)))).toBe(sign(compareCodePoints(a, b)));
      }),
    );
  });

  it('orders stream index keys by stream id, then stream sequence, and round-trips them', () => {
    fc.assert(
      fc.property(streamArb, seqArb, streamArb, seqArb, (s1, n1, s2, n2) => {
        const k1 = streamKey(streamPrefix(s1), n1);
        const k2 = streamKey(streamPrefix(s2), n2);
        expect(decodeStreamKey(k1)).toEqual({ stream: s1, streamSeq: n1 });
        const expected = s1 === s2 ? sign(n1 - n2) : sign(compareCodePoints(s1, s2));
        expect(sign(Buffer.compare(k1, k2))).toBe(expected);
      }),
    );
  });

  it('keeps every key of a stream inside its prefix and outside any other stream', () => {
    fc.assert(
      fc.property(streamArb, streamArb, seqArb, (s, other, n) => {
        fc.pre(s !== other);
        const key = streamKey(streamPrefix(other), n);
        expect(key.subarray(0, streamPrefix(s).length).equals(streamPrefix(s))).toBe(false);
      }),
    );
  });

  it('gives every stream prefix memory of its own, so a cached prefix never keeps a shared pool slab alive', () => {
    fc.assert(
      fc.property(streamArb, (s) => {
        const prefix = streamPrefix(s);
        expect(prefix.byteOffset).toBe(0);
        expect(prefix.buffer.byteLength).toBe(prefix.length);
      }),
    );
  });

  it('flags lone surrogates, which UTF-8 cannot keep apart', () => {
    expect(isWellFormed('a😀b')).toBe(true);
    expect(isWellFormed('a\ud83db')).toBe(false);
    expect(isWellFormed('\ude00')).toBe(false);
    fc.assert(
      fc.property(textArb, (s) => {
        expect(isWellFormed(s)).toBe(true);
      }),
    );
  });
});
