/**
 * How records sit in `el_events`: seq, stream and stream_seq are columns (the database assigns
 * them), everything else is the `body` JSON text, built like the LevelDB record encoding so only
 * `data` goes through JSON.stringify. A row reads back as the same object the appender received.
 */
import type { LogRecord, NewRecord } from '../types.js';

/** `{"type":…,"data":…,"at":…[,"kind"…][,"causation"…][,"correlation"…]}` */
export function encodeBody(r: NewRecord, dataJson: string, at: number): string {
  let s = '{"type":' + JSON.stringify(r.type) + ',"data":' + dataJson + ',"at":' + at;
  if (r.kind !== undefined) s += ',"kind":' + JSON.stringify(r.kind);
  if (r.causation !== undefined) s += ',"causation":' + r.causation;
  if (r.correlation !== undefined) s += ',"correlation":' + JSON.stringify(r.correlation);
  return s + '}';
}

/** A row of `SELECT seq, stream, stream_seq, body` in array mode (seq comes back as text). */
export type EventRow = [string, string, number, string];

export const EVENT_COLUMNS = 'seq, stream, stream_seq, body';

export function decodeRow(row: EventRow): LogRecord {
  const body = JSON.parse(row[3]) as Omit<LogRecord, 'seq' | 'stream' | 'streamSeq'>;
  return { seq: Number(row[0]), stream: row[1], streamSeq: row[2], ...body };
}

/** `LIKE` matches `_` and `%` anywhere and escapes with a backslash: a literal prefix escapes all three. */
const likeLiteral = (s: string): string => s.replace(/[\\%_]/g, '\\$&');

/** A `LIKE` pattern for stream ids starting with `prefix`. */
export const streamPattern = (prefix: string): string => likeLiteral(prefix) + '%';

/** A `LIKE` pattern for bodies whose record type starts with `prefix` (the body starts with its type: `encodeBody`). */
export const typePattern = (prefix: string): string => likeLiteral('{"type":' + JSON.stringify(prefix).slice(0, -1)) + '%';

/** PostgreSQL text cannot hold U+0000: names with it are refused up front, with the reason. */
export function assertNoNul(name: string, what: string): void {
  if (name.includes('\u0000')) throw new TypeError(`A ${what} may not contain the NUL character`);
}
