/**
 * OpenTelemetry-compatible shapes of docs/api-reference.md "Logs, observability and updates" (`Span`, `SpanNode`, `LogRecord`) and the deterministic id
 * scheme: a trace id is derived from the stream that roots the trace, a span id from the stream and the span's key
 * within it. Rebuilding the projection from the log therefore yields the same ids, and a log line can be linked to
 * its trace before the record that opens the span is committed.
 */
/** OTel SpanKind: 0 internal, 1 server, 2 client, 3 producer, 4 consumer */
export type SpanKind = 0 | 1 | 2 | 3 | 4;
/** OTel status code: 0 unset, 1 ok, 2 error */
export type StatusCode = 0 | 1 | 2;

interface SpanEvent {
  name: string;
  timestamp: string;
  attributes?: Record<string, unknown>;
}

export interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: SpanKind;
  startTime: string;
  endTime?: string;
  /** ms */
  duration?: number;
  attributes: Record<string, unknown>;
  status: { code: StatusCode; message?: string };
  events: SpanEvent[];
  links?: Array<{ traceId: string; spanId: string; attributes?: Record<string, unknown> }>;
  resource?: Record<string, unknown>;
  instrumentationScope?: { name: string; version?: string };
}

export interface SpanNode extends Span {
  children: SpanNode[];
  depth: number;
}

export interface ObsLogRecord {
  timestamp: string;
  traceId?: string;
  spanId?: string;
  traceFlags?: number;
  severityNumber?: number;
  severityText?: string;
  body: unknown;
  attributes?: Record<string, unknown>;
  resource?: Record<string, unknown>;
  instrumentationScope?: { name: string; version?: string };
}

export type SpanEventType = 'span:start' | 'span:end' | 'span:error';

/**
 * 64 bits of a string as 16 hex characters: two independent 32-bit multiply-xorshift hashes (cyrb53-style) of the
 * UTF-16 code units, seeded. Not cryptographic (ids are not secrets), ~20× cheaper than a sha256 per span; 64 bits
 * keep collisions negligible within a bounded store.
 */
function hash64(s: string, seed: number): string {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return hex32(h1) + hex32(h2);
}

/** Two hex digits per byte value: formatting an id by table is ~4× cheaper than `toString(16).padStart()`. */
const HEX_BYTE = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const hex32 = (n: number): string => HEX_BYTE[n >>> 24] + HEX_BYTE[(n >>> 16) & 255] + HEX_BYTE[(n >>> 8) & 255] + HEX_BYTE[n & 255];

/** 32 hex characters, from the stream that roots the trace (`exec:<id>`, `run:<id>`). */
export const traceIdFor = (rootStream: string): string => hash64(rootStream, 0x7ace) + hash64(rootStream, 0x1d5);

/** 16 hex characters, from a stream and the span's key in it (`root`, `step|<id>|<n>`, ...). */
export const spanIdFor = (stream: string, key: string): string => hash64(`${stream}|${key}`, 0x5a4);

/**
 * The `traceId` and `spanId` (its root span) a run's records carry in their `metadata` (executions, agent history),
 * the ids the traces projection gives its spans. `recordedTraceId` is the trace id written into the run's start
 * record (`execution.started` / `run.started`): its own stream's, or its parent's for a sub-workflow, an agent
 * called by a step, a sub-agent. Records written before trace ids were recorded: a run without a parent gets its
 * own stream's; one with a parent gets none (its parent's trace cannot be known from its own records).
 */
export function traceRefOf(stream: string, recordedTraceId: unknown, hasParent: boolean): { traceId: string; spanId: string } | undefined {
  const traceId = typeof recordedTraceId === 'string' && recordedTraceId !== '' ? recordedTraceId : hasParent ? undefined : traceIdFor(stream);
  return traceId ? { traceId, spanId: spanIdFor(stream, 'root') } : undefined;
}

/** Builds the tree of a trace's spans: roots are spans whose parent is absent from the list. */
export function buildTree(spans: readonly Span[]): SpanNode[] {
  const nodes = new Map<string, SpanNode>();
  for (const s of spans) nodes.set(s.spanId, { ...s, children: [], depth: 0 });
  const roots: SpanNode[] = [];
  for (const n of nodes.values()) {
    const parent = n.parentSpanId ? nodes.get(n.parentSpanId) : undefined;
    if (parent && parent !== n) parent.children.push(n);
    else roots.push(n);
  }
  const setDepth = (n: SpanNode, d: number, seen: Set<SpanNode>) => {
    if (seen.has(n)) return;
    seen.add(n);
    n.depth = d;
    n.children.sort(byStart);
    for (const c of n.children) setDepth(c, d + 1, seen);
  };
  roots.sort(byStart);
  const seen = new Set<SpanNode>();
  for (const r of roots) setDepth(r, 0, seen);
  return roots;
}

const byStart = (a: Span, b: Span) => (a.startTime < b.startTime ? -1 : a.startTime > b.startTime ? 1 : 0);
