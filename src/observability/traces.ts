/**
 * The traces projection: committed records of execution and agent-run streams become OpenTelemetry-style spans
 * (an execution, a step, an agent run, an LLM step, a tool call) with parent links and timing. What each record
 * type does is a table (src/observability/span-mapping.ts) of handlers over the small `SpanOps` API below; a type
 * without an entry is ignored, so new record types never break the projection.
 *
 * Ids are deterministic (span-types.ts), so the projection rebuilt from sequence 0 on boot equals the one built
 * incrementally. Per-stream state (open spans, occurrence counters) is bounded (oldest streams forgotten first); a
 * stream seen again after its state was forgotten gets the same ids back, only a nested stream's link to its
 * parent trace is lost then. A finished stream (no span open) keeps its state as one JSON text (`freeze`): most
 * of the 20,000 states are finished streams, and as objects with their maps they were ~500 bytes each.
 */
import type { LogRecord } from '../log/types.js';
import { spanIdFor, traceIdFor, type Span, type SpanEventType, type SpanKind, type StatusCode } from '../kernel/span-types.js';
import { TraceStore } from './traces-store.js';
import { iso } from '../kernel/time.js';
import { flat } from '../kernel/flat-string.js';

export interface RootEntity {
  type?: string;
  id?: string;
}

export interface StreamSpans {
  stream: string;
  traceId: string;
  rootSpanId: string;
  /** the entity of the trace's root span (a nested stream inherits its parent's) */
  entity: RootEntity;
  /**
   * logical key (`step|<stepId>`, `llm`, `tool|<callId>`) → open span id. The maps are created when first
   * needed and `open` is dropped again when its last span closes: a finished stream's state is kept for 20,000
   * streams, and three empty maps each were half of it.
   */
  open?: Map<string, string>;
  /** logical key → occurrences so far */
  counts?: Map<string, number>;
  rootOpen: boolean;
  /** free per-stream notes of the mapping handlers (e.g. when the current LLM step began) */
  memo?: Map<string, unknown>;
}

/** A stream's state as plain data (maps as entry lists). */
export interface StreamDump {
  stream: string;
  traceId: string;
  rootSpanId: string;
  entity: RootEntity;
  rootOpen: boolean;
  open?: Array<[string, string]>;
  counts?: Array<[string, number]>;
  memo?: Array<[string, unknown]>;
}

export interface SpanChange {
  type: SpanEventType;
  span: Span;
  entity: RootEntity;
}

interface OpenSpanOptions {
  name: string;
  kind?: SpanKind;
  attributes?: Record<string, unknown>;
  /** the logical key of the parent span in the same stream (default: the root) */
  parentKey?: string;
  /** epoch ms start (default: the record's time) */
  startAt?: number;
}

interface CloseSpanOptions {
  code?: StatusCode;
  message?: string;
  attributes?: Record<string, unknown>;
  event?: { name: string; attributes?: Record<string, unknown> };
}

interface RootOptions {
  name: string;
  kind?: SpanKind;
  entityType: string;
  entityId: string;
  entityName?: string;
  attributes?: Record<string, unknown>;
  /** a parent in another stream (nested workflow, agent called by a step, sub-agent) */
  parent?: { stream: string; key?: string };
  /** the trace id recorded in the start record (wins over the one derived from the stream or its parent) */
  traceId?: string;
}

/** What a mapping handler may do with one record. */
export interface SpanOps {
  readonly record: LogRecord;
  readonly data: Record<string, unknown>;
  /** per-stream notes kept between records */
  readonly memo: Map<string, unknown>;
  /** opens the stream's root span (ignored when it already exists) */
  root(opts: RootOptions): void;
  /** opens a child span under `parentKey` (default root); an open span with the same key is ended first */
  open(key: string, opts: OpenSpanOptions): void;
  /** ends the open span of `key`; false when there is none */
  close(key: string, opts?: CloseSpanOptions): boolean;
  /** true while a span of `key` is open */
  isOpen(key: string): boolean;
  /** adds an event to the open span of `key` (or the root) */
  event(key: string, name: string, attributes?: Record<string, unknown>): void;
  /** merges attributes into the open span of `key` (or the root) */
  setAttributes(key: string, attributes: Record<string, unknown>): void;
  /** ends every open child span, then the root */
  closeAll(opts: CloseSpanOptions): void;
  /** ends every open child span (not the root) */
  closeChildren(opts: CloseSpanOptions): void;
}

export type SpanHandler = (ops: SpanOps) => void;
export type SpanMapping = Readonly<Record<string, SpanHandler>>;

const MAX_STREAM_STATES = 20_000;

/** A finished stream's state, compact: `[traceId, rootSpanId, entity type, entity id, counts, memo]` as JSON (0: no map). */
type FrozenState = string;

function freeze(st: StreamSpans): FrozenState {
  return flat(JSON.stringify([st.traceId, st.rootSpanId, st.entity.type ?? null, st.entity.id ?? null, st.counts ? [...st.counts] : 0, st.memo ? [...st.memo] : 0]));
}

type FrozenFields = [traceId: string, rootSpanId: string, type: string | null, id: string | null, counts: Array<[string, number]> | 0, memo: Array<[string, unknown]> | 0];

function entityOf(type: string | null, id: string | null): RootEntity {
  const entity: RootEntity = {};
  if (type !== null) entity.type = type;
  if (id !== null) entity.id = id;
  return entity;
}

/** A dumped state as the projection keeps it (maps from entry lists). */
function stateOf(d: StreamDump): StreamSpans {
  return {
    stream: d.stream,
    traceId: d.traceId,
    rootSpanId: d.rootSpanId,
    entity: d.entity,
    rootOpen: d.rootOpen,
    ...(d.open ? { open: new Map(d.open) } : {}),
    ...(d.counts ? { counts: new Map(d.counts) } : {}),
    ...(d.memo ? { memo: new Map(d.memo) } : {}),
  };
}

const thaw = (stream: string, text: FrozenState): StreamSpans => stateOf(dumpOfFrozen(stream, text));

function dumpOf(st: StreamSpans): StreamDump {
  return {
    stream: st.stream,
    traceId: st.traceId,
    rootSpanId: st.rootSpanId,
    entity: st.entity,
    rootOpen: st.rootOpen,
    ...(st.open ? { open: [...st.open] } : {}),
    ...(st.counts ? { counts: [...st.counts] } : {}),
    ...(st.memo ? { memo: [...st.memo] } : {}),
  };
}

/** A finished stream's dump straight from its text (what `dumpOf(thaw(...))` gives, without the maps). */
function dumpOfFrozen(stream: string, text: FrozenState): StreamDump {
  const [traceId, rootSpanId, type, id, counts, memo] = JSON.parse(text) as FrozenFields;
  return { stream, traceId, rootSpanId, entity: entityOf(type, id), rootOpen: false, ...(counts ? { counts } : {}), ...(memo ? { memo } : {}) };
}

const isFinished = (st: StreamSpans): boolean => !st.rootOpen && st.open === undefined;

export class TraceProjection {
  /** per-stream state, oldest first; a finished stream's as a `FrozenState` */
  private readonly streams = new Map<string, StreamSpans | FrozenState>();
  private readonly listeners = new Set<(c: SpanChange) => void>();
  /** records at or below this sequence are a boot replay: no span events are emitted for them */
  liveAfter = 0;
  lastSeq = 0;

  constructor(
    readonly store: TraceStore,
    private readonly mapping: SpanMapping,
  ) {}

  onChange(listener: (c: SpanChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  apply(record: LogRecord): void {
    if (record.seq <= this.lastSeq) return;
    this.lastSeq = record.seq;
    const handler = this.mapping[record.type];
    if (!handler) return;
    const data = record.data && typeof record.data === 'object' && !Array.isArray(record.data) ? (record.data as Record<string, unknown>) : {};
    const st = this.state(record.stream);
    handler(new RecordOps(this, st, record, data));
    if (isFinished(st)) this.streams.set(st.stream, freeze(st));
  }

  /** A stream's state as an object (a frozen one thawed, not stored back). */
  private view(stream: string): StreamSpans | undefined {
    const st = this.streams.get(stream);
    return typeof st === 'string' ? thaw(stream, st) : st;
  }

  /** The per-stream states, oldest first, as plain data. */
  dumpStreams(): StreamDump[] {
    return this.dumpStreamParts(Number.MAX_SAFE_INTEGER).flatMap((part) => part());
  }

  /**
   * The per-stream states, oldest first, in parts of `size` (a snapshot writes one part at a time):
   * an unfinished stream's state is copied now, a finished one's (an immutable text) when its part is
   * built, so a save does not hold 20,000 copies at once.
   */
  dumpStreamParts(size: number): Array<() => StreamDump[]> {
    const entries: Array<StreamDump | [string, FrozenState]> = [];
    for (const [stream, kept] of this.streams) entries.push(typeof kept === 'string' ? [stream, kept] : dumpOf(kept));
    const parts: Array<() => StreamDump[]> = [];
    for (let i = 0; i < entries.length; i += size) {
      const part = entries.slice(i, i + size);
      parts.push(() => part.map((e) => (Array.isArray(e) ? dumpOfFrozen(e[0], e[1]) : e)));
    }
    return parts;
  }

  /** Replaces the per-stream states with dumped ones. */
  loadStreams(dump: readonly StreamDump[]): void {
    this.streams.clear();
    for (const d of dump) {
      const st = stateOf(d);
      this.streams.set(d.stream, isFinished(st) ? freeze(st) : st);
    }
  }

  /** The state of a stream (for linking log lines), or what its ids would be. */
  streamInfo(stream: string): StreamSpans | undefined {
    return this.view(stream);
  }

  /**
   * Trace and span a log line belongs to. With `key`: the open span of that key, else (with `orLast`) its latest
   * span, or the id its first span will have; else the stream's root span.
   */
  locate(stream: string, key?: string, orLast = true): { traceId: string; spanId: string; entity: RootEntity } {
    const st = this.view(stream);
    if (!st) return { traceId: traceIdFor(stream), spanId: key && orLast ? spanIdFor(stream, `${key}|1`) : spanIdFor(stream, 'root'), entity: {} };
    const spanId = (key && st.open?.get(key)) || (key && orLast ? spanIdFor(stream, `${key}|${st.counts?.get(key) ?? 1}`) : undefined) || st.rootSpanId;
    return { traceId: st.traceId, spanId, entity: st.entity };
  }

  /** true while a span of `key` (`root`: the stream's root span, open or ended) exists for `stream` */
  has(stream: string, key: string): boolean {
    const st = this.view(stream);
    if (!st) return false;
    return key === 'root' ? st.rootOpen || this.store.getSpan(st.rootSpanId) !== undefined : (st.open?.has(key) ?? false);
  }

  /** The state a record of `stream` changes: a frozen one thawed in its place, a new one last. */
  private state(stream: string): StreamSpans {
    const kept = this.streams.get(stream);
    if (typeof kept === 'string') {
      const st = thaw(stream, kept);
      this.streams.set(stream, st);
      return st;
    }
    let st = kept;
    if (!st) {
      st = { stream, traceId: traceIdFor(stream), rootSpanId: spanIdFor(stream, 'root'), entity: {}, rootOpen: false };
      this.streams.set(stream, st);
      if (this.streams.size > MAX_STREAM_STATES) this.streams.delete(this.streams.keys().next().value as string);
    }
    return st;
  }

  /** @internal span events to the listeners (live records only) */
  emit(type: SpanEventType, span: Span, entity: RootEntity): void {
    if (this.lastSeq <= this.liveAfter || this.listeners.size === 0) return;
    for (const l of this.listeners) l({ type, span, entity });
  }
}

/** The operations of one record on its stream's spans (a class: no closures allocated per record). */
class RecordOps implements SpanOps {
  private readonly at: number;
  private readonly iso: string;

  constructor(
    private readonly p: TraceProjection,
    private readonly st: StreamSpans,
    readonly record: LogRecord,
    readonly data: Record<string, unknown>,
  ) {
    this.at = record.at;
    this.iso = iso(record.at);
  }

  get memo(): Map<string, unknown> {
    return (this.st.memo ??= new Map());
  }

  private spanOf(key: string): Span | undefined {
    const id = key === 'root' ? this.st.rootSpanId : this.st.open?.get(key);
    return id ? this.p.store.getSpan(id) : undefined;
  }

  private start(span: Span): void {
    this.p.store.add(span);
    this.p.emit('span:start', span, this.st.entity);
  }

  private end(span: Span | undefined, opts: CloseSpanOptions): void {
    if (!span || span.endTime !== undefined) return;
    span.endTime = this.iso;
    span.duration = Math.max(0, this.at - Date.parse(span.startTime));
    if (opts.attributes) Object.assign(span.attributes, opts.attributes);
    if (opts.event) span.events.push({ name: opts.event.name, timestamp: this.iso, ...(opts.event.attributes ? { attributes: opts.event.attributes } : {}) });
    span.status = opts.message !== undefined ? { code: opts.code ?? 1, message: opts.message } : { code: opts.code ?? 1 };
    this.p.emit(span.status.code === 2 ? 'span:error' : 'span:end', span, this.st.entity);
  }

  root(opts: RootOptions): void {
    const st = this.st;
    if (st.rootOpen || this.p.store.getSpan(st.rootSpanId)) return;
    let parentSpanId: string | undefined;
    if (opts.parent) {
      const where = this.p.locate(opts.parent.stream, opts.parent.key);
      st.traceId = where.traceId;
      parentSpanId = where.spanId;
      st.entity = where.entity.id !== undefined ? where.entity : { type: opts.entityType, id: opts.entityId };
    } else {
      st.entity = { type: opts.entityType, id: opts.entityId };
    }
    // the recorded id keeps a nested stream in its parent's trace even after the parent's state was forgotten
    if (opts.traceId) st.traceId = opts.traceId;
    st.rootOpen = true;
    const attributes: Record<string, unknown> = { 'entity.id': opts.entityId, 'entity.type': opts.entityType };
    if (opts.entityName !== undefined) attributes['entity.name'] = opts.entityName;
    if (opts.attributes) Object.assign(attributes, opts.attributes);
    const span: Span = { traceId: st.traceId, spanId: st.rootSpanId, name: opts.name, kind: opts.kind ?? 0, startTime: this.iso, attributes, status: { code: 0 }, events: [] };
    if (parentSpanId) span.parentSpanId = parentSpanId;
    this.start(span);
  }

  open(key: string, opts: OpenSpanOptions): void {
    const st = this.st;
    if (st.open?.has(key)) this.close(key, { code: 0, event: { name: 'superseded' } });
    const counts = (st.counts ??= new Map());
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    const spanId = spanIdFor(st.stream, `${key}|${n}`);
    const parentKey = opts.parentKey ?? 'root';
    const parentSpanId = parentKey === 'root' ? st.rootSpanId : (st.open?.get(parentKey) ?? st.rootSpanId);
    (st.open ??= new Map()).set(key, spanId);
    const attributes: Record<string, unknown> = st.entity.id !== undefined ? { 'entity.id': st.entity.id, 'entity.type': st.entity.type } : {};
    if (opts.attributes) Object.assign(attributes, opts.attributes);
    this.start({
      traceId: st.traceId,
      spanId,
      parentSpanId,
      name: opts.name,
      kind: opts.kind ?? 0,
      startTime: opts.startAt !== undefined && opts.startAt < this.at ? iso(opts.startAt) : this.iso,
      attributes,
      status: { code: 0 },
      events: [],
    });
  }

  close(key: string, opts: CloseSpanOptions = {}): boolean {
    const st = this.st;
    if (key === 'root') {
      if (!st.rootOpen) return false;
      st.rootOpen = false;
      this.end(this.p.store.getSpan(st.rootSpanId), opts);
      return true;
    }
    const id = st.open?.get(key);
    if (!id) return false;
    st.open!.delete(key);
    if (st.open!.size === 0) st.open = undefined;
    this.end(this.p.store.getSpan(id), opts);
    return true;
  }

  isOpen(key: string): boolean {
    return key === 'root' ? this.st.rootOpen : (this.st.open?.has(key) ?? false);
  }

  event(key: string, name: string, attributes?: Record<string, unknown>): void {
    const span = this.spanOf(key) ?? this.spanOf('root');
    if (span) span.events.push(attributes ? { name, timestamp: this.iso, attributes } : { name, timestamp: this.iso });
  }

  setAttributes(key: string, attributes: Record<string, unknown>): void {
    const span = this.spanOf(key) ?? this.spanOf('root');
    if (span) Object.assign(span.attributes, attributes);
  }

  closeChildren(opts: CloseSpanOptions): void {
    for (const key of [...(this.st.open?.keys() ?? [])].reverse()) this.close(key, opts);
  }

  closeAll(opts: CloseSpanOptions): void {
    this.closeChildren(opts.code === 2 ? { code: 2, message: opts.message } : { code: opts.code ?? 1 });
    this.close('root', opts);
  }
}
