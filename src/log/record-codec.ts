/**
 * Record codec: validates what producers hand to `append` and turns committed records into the
 * JSON stored on disk (and back). The stored value is the record envelope of docs/design-notes.md "The event log contract", built by
 * string concatenation so that only `data` goes through `JSON.stringify` per record: the stream id
 * is escaped once per append and record types once per distinct type.
 */
import type { LogRecord, NewRecord } from './types.js';

/** Cache of `JSON.stringify(type)`: types are a small vocabulary repeated millions of times. */
const typeJsonCache = new Map<string, string>();

function typeJson(type: string): string {
  let json = typeJsonCache.get(type);
  if (json === undefined) {
    json = JSON.stringify(type);
    if (typeJsonCache.size > 4096) typeJsonCache.clear();
    typeJsonCache.set(type, json);
  }
  return json;
}

/**
 * Validates `records` and serialises each `data` (undefined becomes null, as JSON would store it).
 * Throws a TypeError naming the offending record before any sequence is assigned, so a bad record
 * never burns a sequence number.
 */
export function serializeData(records: readonly NewRecord[]): string[] {
  if (!Array.isArray(records) || records.length === 0) throw new TypeError('append needs a non-empty array of records');
  const out = new Array<string>(records.length);
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    if (r === null || typeof r !== 'object') throw new TypeError(`records[${i}] must be an object`);
    if (typeof r.type !== 'string' || r.type.length === 0) throw new TypeError(`records[${i}].type must be a non-empty string`);
    if (r.at !== undefined && (typeof r.at !== 'number' || !Number.isFinite(r.at))) throw new TypeError(`records[${i}].at must be a finite number`);
    if (r.kind !== undefined && typeof r.kind !== 'string') throw new TypeError(`records[${i}].kind must be a string`);
    if (r.causation !== undefined && (typeof r.causation !== 'number' || !Number.isFinite(r.causation))) {
      throw new TypeError(`records[${i}].causation must be a finite number`);
    }
    if (r.correlation !== undefined && typeof r.correlation !== 'string') throw new TypeError(`records[${i}].correlation must be a string`);
    let json: string | undefined;
    try {
      json = JSON.stringify(r.data);
    } catch (err) {
      throw new TypeError(`records[${i}].data is not JSON-serialisable: ${(err as Error).message}`);
    }
    out[i] = json === undefined ? 'null' : json;
  }
  return out;
}

/**
 * Builds the committed record object (what appenders and live subscribers receive). Optional
 * fields are present only when set, so the object equals what `decodeRecord` returns later.
 * `data` is the producer's object itself, not a copy: records are shared and must be treated as
 * immutable.
 */
export function makeRecord(r: NewRecord, seq: number, stream: string, streamSeq: number, at: number): LogRecord {
  const rec: LogRecord = { seq, stream, streamSeq, type: r.type, data: r.data === undefined ? null : r.data, at };
  if (r.kind !== undefined) rec.kind = r.kind;
  if (r.causation !== undefined) rec.causation = r.causation;
  if (r.correlation !== undefined) rec.correlation = r.correlation;
  return rec;
}

/** The stored JSON of a record; `streamJson` is `JSON.stringify(rec.stream)`, computed once per append. */
export function encodeRecord(rec: LogRecord, streamJson: string, dataJson: string): string {
  let s = '{"seq":' + rec.seq + ',"stream":' + streamJson + ',"streamSeq":' + rec.streamSeq + ',"type":' + typeJson(rec.type) + ',"data":' + dataJson + ',"at":' + rec.at;
  if (rec.kind !== undefined) s += ',"kind":' + JSON.stringify(rec.kind);
  if (rec.causation !== undefined) s += ',"causation":' + rec.causation;
  if (rec.correlation !== undefined) s += ',"correlation":' + JSON.stringify(rec.correlation);
  return s + '}';
}

export function decodeRecord(json: string): LogRecord {
  return JSON.parse(json) as LogRecord;
}

/** Describes what is wrong with a decoded record, or returns undefined when it is well formed. */
export function recordProblem(rec: unknown): string | undefined {
  if (rec === null || typeof rec !== 'object') return 'is not an object';
  const r = rec as Record<string, unknown>;
  if (!Number.isSafeInteger(r.seq) || (r.seq as number) < 1) return 'has no valid seq';
  if (typeof r.stream !== 'string' || r.stream.length === 0) return 'has no valid stream';
  if (!Number.isSafeInteger(r.streamSeq) || (r.streamSeq as number) < 1) return 'has no valid streamSeq';
  if (typeof r.type !== 'string' || r.type.length === 0) return 'has no valid type';
  if (!('data' in r)) return 'has no data';
  if (typeof r.at !== 'number' || !Number.isFinite(r.at)) return 'has no valid at';
  return undefined;
}
