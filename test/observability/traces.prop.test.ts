/**
 * Properties of the traces projection: no record sequence, however malformed, makes it throw or break the store's
 * invariants; interleaved well-formed runs always yield closed spans whose parents are in their trace; a projection
 * fed with re-deliveries equals one fed each record once (rebuild == incremental).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { LogRecord } from '../../src/log/types.js';
import { TraceProjection } from '../../src/observability/traces.js';
import { TraceStore } from '../../src/observability/traces-store.js';
import { DEFAULT_SPAN_MAPPING } from '../../src/observability/span-mapping.js';
import { RecordSeq, agentRun, completedExecution, failedExecution } from './records.js';

const TYPES = [...Object.keys(DEFAULT_SPAN_MAPPING), 'run.text-delta', 'execution.unknown', 'x'];
const value = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(null), fc.constant(undefined), fc.array(fc.anything({ maxDepth: 1 }), { maxLength: 2 }));
const dataArb = fc.oneof(
  fc.record(
    {
      stepId: fc.constantFrom('a', 'b'),
      workflowId: value,
      executionId: value,
      parentExecutionId: fc.constantFrom('e1', 'e2', 'zz'),
      parentStepId: fc.constantFrom('a', 'b'),
      agentId: value,
      metadata: fc.oneof(value, fc.record({ parentRunId: fc.constantFrom('r1', 'r2'), executionId: fc.constantFrom('e1', 'e2'), stepId: fc.constantFrom('a') }, { requiredKeys: [] })),
      step: fc.oneof(value, fc.record({ toolCalls: fc.array(fc.record({ toolCallId: fc.constantFrom('c1', 'c2'), toolName: value }), { maxLength: 2 }), usage: value })),
      steps: value,
      error: fc.oneof(value, fc.record({ message: value, stepId: fc.constantFrom('a', 'b') })),
      event: value,
    },
    { requiredKeys: [] },
  ),
  value,
);
const recordArb = fc.record({
  stream: fc.constantFrom('exec:e1', 'exec:e2', 'run:r1', 'run:r2', 'conv:c'),
  type: fc.constantFrom(...TYPES),
  data: dataArb,
  dt: fc.integer({ min: 0, max: 50 }),
});

function checkInvariants(store: TraceStore, capacity: number) {
  expect(store.spanCount).toBeLessThanOrEqual(capacity);
  let spans = 0;
  for (const t of store.listTraces({}, 1_000_000)) {
    const list = store.traceSpans(t.traceId);
    expect(list.length).toBeGreaterThan(0);
    spans += list.length;
    for (const s of list) {
      expect(s.traceId).toBe(t.traceId);
      if (s.endTime !== undefined) {
        expect(Date.parse(s.endTime)).toBeGreaterThanOrEqual(Date.parse(s.startTime));
        expect(s.duration).toBe(Date.parse(s.endTime) - Date.parse(s.startTime));
      }
    }
  }
  expect(spans).toBe(store.spanCount);
}

describe('traces projection properties', () => {
  it('never throws on arbitrary records and keeps the store consistent and bounded', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 60 }), fc.integer({ min: 3, max: 30 }), (recs, capacity) => {
        const r = new RecordSeq();
        const store = new TraceStore(capacity);
        const p = new TraceProjection(store, DEFAULT_SPAN_MAPPING);
        p.onChange(() => undefined);
        for (const x of recs) p.apply(r.rec(x.stream, x.type, x.data as Record<string, unknown>, x.dt));
        checkInvariants(store, capacity);
      }),
      { numRuns: 400 },
    );
  });

  it('closes every span of interleaved finished runs, each child under a parent of its own trace', () => {
    const runArb = fc.array(fc.constantFrom('completed', 'failed', 'agent'), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(runArb, fc.integer({ min: 0, max: 1_000_000 }), (kinds, seed) => {
        const r = new RecordSeq();
        const streams = kinds.map((k, i) => (k === 'completed' ? completedExecution(r, `c${i}`) : k === 'failed' ? failedExecution(r, `f${i}`) : agentRun(r, `a${i}`)));
        // interleave the streams in a seeded order, keeping each stream's own order, then renumber
        const queues = streams.map((s) => [...s]);
        const merged: LogRecord[] = [];
        let x = seed;
        while (queues.some((q) => q.length)) {
          x = (x * 1103515245 + 12345) % 2147483648;
          const live = queues.filter((q) => q.length);
          merged.push(live[x % live.length].shift()!);
        }
        merged.forEach((rec, i) => (rec.seq = i + 1));
        const store = new TraceStore();
        const p = new TraceProjection(store, DEFAULT_SPAN_MAPPING);
        for (const rec of merged) p.apply(rec);
        const expected = kinds.reduce((n, k) => n + (k === 'completed' ? 3 : k === 'failed' ? 3 : 4), 0);
        expect(store.spanCount).toBe(expected);
        expect(store.traceCount).toBe(kinds.length);
        for (const t of store.listTraces({}, 100)) {
          const spans = store.traceSpans(t.traceId);
          const ids = new Set(spans.map((s) => s.spanId));
          expect(spans.filter((s) => !s.parentSpanId)).toHaveLength(1);
          for (const s of spans) {
            expect(s.endTime).toBeDefined();
            if (s.parentSpanId) expect(ids.has(s.parentSpanId)).toBe(true);
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('equals, after re-deliveries, the projection that saw each record once', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 20 }), (recs, replays) => {
        const r = new RecordSeq();
        const records = recs.map((x) => r.rec(x.stream, x.type, x.data as Record<string, unknown>, x.dt));
        const once = new TraceProjection(new TraceStore(), DEFAULT_SPAN_MAPPING);
        for (const rec of records) once.apply(rec);
        const again = new TraceProjection(new TraceStore(), DEFAULT_SPAN_MAPPING);
        records.forEach((rec, i) => {
          again.apply(rec);
          for (const k of replays) if (records.length && k % records.length <= i) again.apply(records[k % records.length]);
        });
        const dump = (p: TraceProjection) => p.store.listTraces({}, 1000).map((t) => p.store.traceSpans(t.traceId));
        expect(dump(again)).toEqual(dump(once));
      }),
      { numRuns: 200 },
    );
  });
});
