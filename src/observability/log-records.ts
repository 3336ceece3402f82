/**
 * Observability log records: every captured server log entry as an OpenTelemetry-style `LogRecord`, linked to the
 * trace and span of the execution, step, run or tool call it names (log-capture + logger-for keys). Bounded to
 * 50,000 records (oldest evicted), indexed by trace and span for `/observability/traces/:id/logs` and
 * `/observability/spans/:id/logs`. In memory only: log records are not rebuilt after a restart.
 */
import type { CapturedLog } from './log-entry.js';
import { Ring } from './ring.js';
import type { ObsLogRecord } from '../kernel/span-types.js';
import { cutText } from './cut-text.js';
import { flat } from '../kernel/flat-string.js';

export const LOG_RECORD_CAPACITY = 50_000;

/** OTel severity numbers of pino's levels */
const SEVERITY: Record<string, { number: number; text: string }> = {
  trace: { number: 1, text: 'TRACE' },
  debug: { number: 5, text: 'DEBUG' },
  info: { number: 9, text: 'INFO' },
  warn: { number: 13, text: 'WARN' },
  error: { number: 17, text: 'ERROR' },
  fatal: { number: 21, text: 'FATAL' },
};

/**
 * A kept record, compact: at the default bound of 50,000 records the store is the largest thing in
 * the heap. The fields the filters read stay fields; the resource and the scope are the same objects
 * for every record, kept by reference; the timestamp, body and attributes are one JSON text, parsed
 * when read.
 */
interface StoredLog {
  readonly time: number;
  readonly traceId: string | undefined;
  readonly spanId: string | undefined;
  readonly traceFlags: number | undefined;
  readonly severityNumber: number | undefined;
  readonly severityText: string | undefined;
  readonly resource: ObsLogRecord['resource'];
  readonly instrumentationScope: ObsLogRecord['instrumentationScope'];
  /** `[timestamp, body, attributes]` */
  readonly json: string;
}

function storedOf(time: number, r: ObsLogRecord): StoredLog {
  return {
    time,
    traceId: r.traceId,
    spanId: r.spanId,
    traceFlags: r.traceFlags,
    severityNumber: r.severityNumber,
    severityText: r.severityText,
    resource: r.resource,
    instrumentationScope: r.instrumentationScope,
    json: flat(JSON.stringify([r.timestamp, r.body, r.attributes])),
  };
}

/** The record as it was added (its values as JSON: what the routes answer anyway), its keys in the order `toLogRecord` gives them. */
function recordOf(s: StoredLog): ObsLogRecord {
  const [timestamp, body, attributes] = JSON.parse(s.json) as [string, unknown, Record<string, unknown> | undefined];
  // built key by key, in the order `toLogRecord` gives them (body comes after the trace and severity)
  const r = { timestamp } as ObsLogRecord;
  if (s.traceId !== undefined) r.traceId = s.traceId;
  if (s.spanId !== undefined) r.spanId = s.spanId;
  if (s.traceFlags !== undefined) r.traceFlags = s.traceFlags;
  if (s.severityNumber !== undefined) r.severityNumber = s.severityNumber;
  if (s.severityText !== undefined) r.severityText = s.severityText;
  r.body = body;
  if (attributes !== undefined && attributes !== null) r.attributes = attributes;
  if (s.resource !== undefined) r.resource = s.resource;
  if (s.instrumentationScope !== undefined) r.instrumentationScope = s.instrumentationScope;
  return r;
}

export interface LogRecordFilter {
  traceId?: string;
  spanId?: string;
  severityNumber?: number;
  severityText?: string;
  /** epoch ms, inclusive */
  startTime?: number;
  /** epoch ms, inclusive */
  endTime?: number;
}

/** Values are kept small, as span attributes are (span-mapping.ts): a store bounded by count is then bounded in bytes. */
const MAX_VALUE_CHARS = 2048;

function bounded(value: unknown): unknown {
  if (typeof value === 'string') return value.length > MAX_VALUE_CHARS ? cutText(value, MAX_VALUE_CHARS) : value;
  if (value === null || typeof value !== 'object') return value;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return String(value);
  }
  return text !== undefined && text.length > MAX_VALUE_CHARS ? cutText(text, MAX_VALUE_CHARS) : value;
}

export function toLogRecord(
  log: CapturedLog,
  link: { traceId?: string; spanId?: string },
  shared: { resource: Record<string, unknown>; instrumentationScope: { name: string; version?: string } },
): ObsLogRecord {
  const { timestamp, level, msg, ...fields } = log.entry;
  const sev = SEVERITY[level] ?? SEVERITY.info;
  const attributes: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) attributes[k] = bounded(v);
  return {
    timestamp,
    ...(link.traceId ? { traceId: link.traceId, spanId: link.spanId, traceFlags: 1 } : {}),
    severityNumber: sev.number,
    severityText: sev.text,
    body: bounded(msg),
    attributes,
    resource: shared.resource,
    instrumentationScope: shared.instrumentationScope,
  };
}

/**
 * The store: a ring, newest last. Reads by trace or span scan it (50,000 string comparisons, about a
 * millisecond) rather than keep an index: indexes by trace and by span cost up to ~180 bytes a record,
 * a fifth of the store, for reads that only the console's trace view makes.
 */
export class LogRecordStore {
  private readonly ring: Ring<StoredLog>;

  constructor(capacity = LOG_RECORD_CAPACITY) {
    this.ring = new Ring(capacity);
  }

  get size(): number {
    return this.ring.size;
  }

  add(time: number, record: ObsLogRecord): void {
    this.ring.push(storedOf(time, record));
  }

  ofTrace(traceId: string): ObsLogRecord[] {
    return this.ring
      .newest((s) => s.traceId === traceId, this.ring.size)
      .reverse()
      .map(recordOf);
  }

  ofSpan(spanId: string): ObsLogRecord[] {
    return this.ring
      .newest((s) => s.spanId === spanId, this.ring.size)
      .reverse()
      .map(recordOf);
  }

  /** The most recent `limit` matches, oldest first. */
  query(f: LogRecordFilter, limit: number): ObsLogRecord[] {
    const keep = (s: StoredLog) =>
      (f.traceId === undefined || s.traceId === f.traceId) &&
      (f.spanId === undefined || s.spanId === f.spanId) &&
      (f.severityNumber === undefined || s.severityNumber === f.severityNumber) &&
      (f.severityText === undefined || s.severityText?.toUpperCase() === f.severityText.toUpperCase()) &&
      (f.startTime === undefined || s.time >= f.startTime) &&
      (f.endTime === undefined || s.time <= f.endTime);
    const out: ObsLogRecord[] = [];
    for (const s of this.ring.newest(keep, limit)) out.push(recordOf(s));
    return out.reverse();
  }
}
