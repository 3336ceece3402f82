/**
 * The bounded span store behind `/observability/*`: at most 10,000 spans (option), the oldest-started evicted
 * first; a trace disappears with its last span. Traces are indexed by their root entity for the list route.
 * Spans are stored as the objects the projection mutates (end time, status, events), so reads return copies.
 */
import type { Span } from '../kernel/span-types.js';

export const SPAN_CAPACITY = 10_000;

export interface TraceInfo {
  traceId: string;
  rootSpanId?: string;
  /** entity of the root span (`entity.type` / `entity.id`) */
  entityType?: string;
  entityId?: string;
  /** epoch ms of the earliest span */
  startedAt: number;
  /** insertion order of this trace, for a stable newest-first order */
  order: number;
  spanIds: Set<string>;
}

export interface StoreDump {
  spans: Span[];
  traceOrder: Array<[traceId: string, order: number]>;
  order: number;
}

export class TraceStore {
  private readonly spans = new Map<string, Span>();
  private readonly traces = new Map<string, TraceInfo>();
  private order = 0;
  /** spans in insertion order (eviction queue; spans removed or replaced meanwhile are skipped when reached) */
  private fifo: Span[] = [];
  private fifoHead = 0;

  constructor(readonly capacity = SPAN_CAPACITY) {}

  get spanCount(): number {
    return this.spans.size;
  }

  get traceCount(): number {
    return this.traces.size;
  }

  /** Adds a span (its object is kept and may be mutated by the caller); evicts the oldest when over capacity. */
  add(span: Span): void {
    if (this.spans.has(span.spanId)) this.remove(span.spanId);
    this.spans.set(span.spanId, span);
    let t = this.traces.get(span.traceId);
    const at = Date.parse(span.startTime);
    if (!t) {
      t = { traceId: span.traceId, startedAt: at, order: ++this.order, spanIds: new Set() };
      this.traces.set(span.traceId, t);
    } else if (at < t.startedAt) t.startedAt = at;
    t.spanIds.add(span.spanId);
    if (!span.parentSpanId) {
      t.rootSpanId = span.spanId;
      t.entityType = str(span.attributes['entity.type']);
      t.entityId = str(span.attributes['entity.id']);
    }
    this.fifo.push(span);
    while (this.spans.size > this.capacity && this.fifoHead < this.fifo.length) {
      const oldest = this.fifo[this.fifoHead++];
      if (this.spans.get(oldest.spanId) === oldest) this.remove(oldest.spanId);
    }
    if (this.fifoHead > 4096 && this.fifoHead * 2 > this.fifo.length) {
      this.fifo = this.fifo.slice(this.fifoHead);
      this.fifoHead = 0;
    }
  }

  getSpan(spanId: string): Span | undefined {
    return this.spans.get(spanId);
  }

  getTrace(traceId: string): TraceInfo | undefined {
    return this.traces.get(traceId);
  }

  /** The spans of a trace ordered by start time (then insertion). */
  traceSpans(traceId: string): Span[] {
    const t = this.traces.get(traceId);
    if (!t) return [];
    const out: Span[] = [];
    for (const id of t.spanIds) {
      const s = this.spans.get(id);
      if (s) out.push(s);
    }
    return out.sort((a, b) => (a.startTime < b.startTime ? -1 : a.startTime > b.startTime ? 1 : 0));
  }

  /** Traces newest first, optionally those whose root entity matches. */
  listTraces(filter: { entityType?: string; entityId?: string }, limit: number): TraceInfo[] {
    const all = [...this.traces.values()].filter((t) => (filter.entityType === undefined || t.entityType === filter.entityType) && (filter.entityId === undefined || t.entityId === filter.entityId));
    all.sort((a, b) => b.startedAt - a.startedAt || b.order - a.order);
    return all.slice(0, limit);
  }

  private remove(spanId: string): void {
    const s = this.spans.get(spanId);
    if (!s) return;
    this.spans.delete(spanId);
    const t = this.traces.get(s.traceId);
    if (!t) return;
    t.spanIds.delete(spanId);
    if (t.spanIds.size === 0) this.traces.delete(s.traceId);
  }

  /** What a snapshot keeps: the spans held, oldest first (the eviction order), and each trace's list order. */
  dump(): StoreDump {
    const spans: Span[] = [];
    for (let i = this.fifoHead; i < this.fifo.length; i++) {
      const s = this.fifo[i];
      if (this.spans.get(s.spanId) === s) spans.push(s);
    }
    return { spans, traceOrder: [...this.traces.values()].map((t) => [t.traceId, t.order]), order: this.order };
  }

  /** Replaces the content with a dump's: the same spans, eviction order and trace order as when it was taken. */
  load(d: StoreDump): void {
    this.clear();
    for (const s of d.spans) this.add(s);
    for (const [traceId, order] of d.traceOrder) {
      const t = this.traces.get(traceId);
      if (t) t.order = order;
    }
    this.order = d.order;
  }

  clear(): void {
    this.spans.clear();
    this.traces.clear();
    this.fifo = [];
    this.fifoHead = 0;
  }
}

const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? undefined : String(v));
