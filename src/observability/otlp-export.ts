/**
 * Optional OTLP/HTTP export of finished spans, through the OpenTelemetry JS exporter
 * (`@opentelemetry/exporter-trace-otlp-http`, protobuf-free JSON by default; the protocol itself is the exporter's).
 * Enabled by `observability.otlp: { endpoint, headers? }` in the config, else by the env variables
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (full URL) or `OTEL_EXPORTER_OTLP_ENDPOINT` (base URL, `/v1/traces`
 * appended) with `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`). Spans are batched (512 or 1 s) and dropped with a
 * warning when the endpoint fails; the queue is bounded (2048 spans), export never blocks the server.
 */
import type { Logger } from 'pino';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { Span } from '../kernel/span-types.js';
import type { OtlpConfig } from './otlp-config.js';

export { resolveOtlpConfig, type OtlpConfig } from './otlp-config.js';

type ReadableSpan = Parameters<OTLPTraceExporter['export']>[0][number];
type HrTime = [number, number];

const BATCH = 512;
const MAX_QUEUE = 2048;
const FLUSH_MS = 1000;

const hr = (iso: string): HrTime => {
  const ms = Date.parse(iso);
  return [Math.floor(ms / 1000), (ms % 1000) * 1e6];
};

function attributeValue(v: unknown): string | number | boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  return JSON.stringify(v);
}

function attributes(a: Record<string, unknown> | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(a ?? {})) {
    const x = attributeValue(v);
    if (x !== undefined) out[k] = x;
  }
  return out;
}

export class OtlpSpanExporter {
  private readonly exporter: OTLPTraceExporter;
  private readonly resource;
  private queue: ReadableSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inflight = new Set<Promise<void>>();
  private dropped = 0;
  exported = 0;

  constructor(
    config: OtlpConfig,
    private readonly version: string,
    private readonly logger?: Logger,
  ) {
    this.exporter = new OTLPTraceExporter({ url: config.endpoint, headers: config.headers, timeoutMillis: 10_000 });
    this.resource = resourceFromAttributes({ 'service.name': 'eventloom', 'service.version': version });
  }

  /** Queues a finished span. */
  add(span: Span): void {
    if (this.queue.length >= MAX_QUEUE) {
      this.dropped++;
      return;
    }
    this.queue.push(this.toReadable(span));
    if (this.queue.length >= BATCH) this.flushNow();
    else this.timer ??= setTimeout(() => this.flushNow(), FLUSH_MS).unref();
  }

  private flushNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    const p = new Promise<void>((resolve) => {
      this.exporter.export(batch, (result) => {
        // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-comparison -- 0 is ExportResultCode.SUCCESS; @opentelemetry/core, which declares it, is no dependency
        if (result.code === 0) this.exported += batch.length;
        else this.logger?.warn({ component: 'observability', err: result.error, spans: batch.length }, 'OTLP span export failed');
        resolve();
      });
    });
    this.inflight.add(p);
    void p.then(() => this.inflight.delete(p));
  }

  /** Sends what is queued and waits for the exports in flight. */
  async flush(): Promise<void> {
    this.flushNow();
    await Promise.all([...this.inflight]);
  }

  async shutdown(): Promise<void> {
    await this.flush();
    if (this.dropped > 0) this.logger?.warn({ component: 'observability', dropped: this.dropped }, 'OTLP export queue overflowed; spans were dropped');
    await this.exporter.shutdown();
  }

  private toReadable(span: Span): ReadableSpan {
    const start = hr(span.startTime);
    const end = hr(span.endTime ?? span.startTime);
    const durationMs = span.duration ?? 0;
    const traceFlags = 1;
    const context = { traceId: span.traceId, spanId: span.spanId, traceFlags };
    return {
      name: span.name,
      kind: span.kind,
      spanContext: () => context,
      parentSpanContext: span.parentSpanId ? { traceId: span.traceId, spanId: span.parentSpanId, traceFlags } : undefined,
      startTime: start,
      endTime: end,
      status: { code: span.status.code, ...(span.status.message ? { message: span.status.message } : {}) },
      attributes: attributes(span.attributes),
      links: [],
      events: span.events.map((e) => ({ name: e.name, time: hr(e.timestamp), attributes: attributes(e.attributes) })),
      duration: [Math.floor(durationMs / 1000), (durationMs % 1000) * 1e6],
      ended: true,
      resource: this.resource,
      instrumentationScope: { name: 'eventloom', version: this.version },
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  }
}
