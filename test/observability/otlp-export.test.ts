/**
 * OTLP/HTTP export: finished spans reach a local OTLP receiver through the OpenTelemetry exporter, with their
 * ids, parent links, status and attributes; settings come from the config section or the standard env variables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OtlpSpanExporter, resolveOtlpConfig } from '../../src/observability/otlp-export.js';
import { TraceProjection } from '../../src/observability/traces.js';
import { TraceStore } from '../../src/observability/traces-store.js';
import { DEFAULT_SPAN_MAPPING } from '../../src/observability/span-mapping.js';
import { traceIdFor } from '../../src/kernel/span-types.js';
import { RecordSeq, failedExecution } from './records.js';
import { startOtlpReceiver, type LocalServer } from './helpers.js';

describe('resolveOtlpConfig', () => {
  it('prefers the config section and appends /v1/traces to a base endpoint', () => {
    expect(resolveOtlpConfig({ otlp: { endpoint: 'http://c:4318', headers: { a: 'b' } } }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env:4318' })).toEqual({
      endpoint: 'http://c:4318/v1/traces',
      headers: { a: 'b' },
    });
    expect(resolveOtlpConfig({ otlp: { endpoint: 'http://c:4318/v1/traces' } }, {})?.endpoint).toBe('http://c:4318/v1/traces');
  });

  it('reads the standard OpenTelemetry env variables and is off without them', () => {
    expect(resolveOtlpConfig(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env:4318/', OTEL_EXPORTER_OTLP_HEADERS: 'x-key=1,y=a%20b' })).toEqual({
      endpoint: 'http://env:4318/v1/traces',
      headers: { 'x-key': '1', y: 'a b' },
    });
    expect(resolveOtlpConfig({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/custom' })?.endpoint).toBe('http://t/custom');
    expect(resolveOtlpConfig({}, {})).toBeUndefined();
  });
});

describe('OtlpSpanExporter', () => {
  let receiver: LocalServer;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(() => receiver.close());

  it('exports finished spans of a run to an OTLP/HTTP receiver', async () => {
    const exporter = new OtlpSpanExporter({ endpoint: `${receiver.url}/v1/traces`, headers: { 'x-test-key': 'k1' } }, '9.9.9');
    const p = new TraceProjection(new TraceStore(), DEFAULT_SPAN_MAPPING);
    p.onChange((c) => {
      if (c.type !== 'span:start') exporter.add(c.span);
    });
    for (const r of failedExecution(new RecordSeq(), 'otlp-1')) p.apply(r);
    await exporter.flush();
    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0];
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v1/traces');
    expect(req.headers['x-test-key']).toBe('k1');
    expect(req.headers['content-type']).toContain('application/json');
    const body = JSON.parse(req.body.toString('utf8'));
    const rs = body.resourceSpans[0];
    expect(rs.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'eventloom' } });
    const spans = rs.scopeSpans[0].spans as Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; status: { code: number; message?: string } }>;
    expect(rs.scopeSpans[0].scope).toMatchObject({ name: 'eventloom', version: '9.9.9' });
    expect(spans.map((s) => s.name).sort()).toEqual(['step:a', 'step:a', 'workflow:Flow']);
    const root = spans.find((s) => s.name === 'workflow:Flow')!;
    expect(root.traceId).toBe(traceIdFor('exec:otlp-1'));
    expect(root.status).toMatchObject({ code: 2, message: 'boom' });
    expect(spans.filter((s) => s.parentSpanId === root.spanId)).toHaveLength(2);
    expect(exporter.exported).toBe(3);
    await exporter.shutdown();
  });
});
