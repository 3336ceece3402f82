/**
 * The observability log record store as a property: whatever records are added (any JSON attributes,
 * linked to a trace and span or not), the store keeps the last `capacity`, and its three reads (by
 * trace, by span, by filter) answer exactly the records that were added, in order, with their
 * resource and scope, as a model that keeps the records themselves would.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LogRecordStore } from '../../src/observability/log-records.js';
import type { ObsLogRecord } from '../../src/kernel/span-types.js';

const RESOURCE = { 'service.name': 'eventloom', 'service.version': '1' };
const SCOPE = { name: 'eventloom', version: '1' };
const ids = fc.constantFrom('t1', 't2', 't3');
const spans = fc.constantFrom('s1', 's2', 's3', 's4');
const severities = fc.constantFrom([9, 'INFO'] as const, [13, 'WARN'] as const, [17, 'ERROR'] as const);

const recordArb = fc
  .record({
    time: fc.integer({ min: 0, max: 100 }),
    link: fc.option(fc.tuple(ids, spans), { nil: undefined }),
    severity: severities,
    body: fc.oneof(fc.string(), fc.jsonValue()),
    attributes: fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  })
  .map(({ time, link, severity, body, attributes }) => {
    const record: ObsLogRecord = {
      timestamp: new Date(time).toISOString(),
      ...(link ? { traceId: link[0], spanId: link[1], traceFlags: 1 } : {}),
      severityNumber: severity[0],
      severityText: severity[1],
      body,
      attributes,
      resource: RESOURCE,
      instrumentationScope: SCOPE,
    };
    return { time, record };
  });

const filterArb = fc.record(
  {
    traceId: ids,
    spanId: spans,
    severityNumber: fc.constantFrom(9, 13, 17),
    severityText: fc.constantFrom('info', 'WARN', 'error'),
    startTime: fc.integer({ min: 0, max: 100 }),
    endTime: fc.integer({ min: 0, max: 100 }),
  },
  { requiredKeys: [] },
);

/** what a route answers: the record as JSON text (keys in order) */
const asJson = (r: ObsLogRecord) => JSON.stringify(r);

describe('log record store', () => {
  it('answers the records it kept exactly as they were added, by trace, by span and by filter', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 40 }), fc.integer({ min: 1, max: 30 }), filterArb, fc.integer({ min: 1, max: 15 }), (added, capacity, filter, limit) => {
        const store = new LogRecordStore(capacity);
        for (const a of added) store.add(a.time, a.record);
        const kept = added.slice(-capacity);
        expect(store.size).toBe(kept.length);
        for (const traceId of ['t1', 't2', 't3']) expect(store.ofTrace(traceId).map(asJson)).toEqual(kept.filter((a) => a.record.traceId === traceId).map((a) => asJson(a.record)));
        for (const spanId of ['s1', 's2', 's3', 's4']) expect(store.ofSpan(spanId).map(asJson)).toEqual(kept.filter((a) => a.record.spanId === spanId).map((a) => asJson(a.record)));
        const matches = kept.filter(
          (a) =>
            (filter.traceId === undefined || a.record.traceId === filter.traceId) &&
            (filter.spanId === undefined || a.record.spanId === filter.spanId) &&
            (filter.severityNumber === undefined || a.record.severityNumber === filter.severityNumber) &&
            (filter.severityText === undefined || a.record.severityText === filter.severityText.toUpperCase()) &&
            (filter.startTime === undefined || a.time >= filter.startTime) &&
            (filter.endTime === undefined || a.time <= filter.endTime),
        );
        const got = store.query(filter, limit);
        expect(got.map(asJson)).toEqual(matches.slice(-limit).map((a) => asJson(a.record)));
        // the shared resource and scope come back as the objects they were
        for (const r of got) {
          expect(r.resource).toBe(RESOURCE);
          expect(r.instrumentationScope).toBe(SCOPE);
        }
      }),
      { numRuns: 300 },
    );
  });
});
