/**
 * `/api/logs` selection as a property: for any sequence of captured entries and any filter, the query returns
 * the most recent `limit` matches among the last 1000 entries, oldest first, each matching every given filter.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LogCapture } from '../../src/observability/log-capture.js';
import { LEVELS, LEVEL_VALUES, type LogFilter } from '../../src/observability/log-entry.js';

const ids = fc.constantFrom('a', 'b', 'c');
const entryArb = fc.record({
  level: fc.constantFrom(...LEVELS),
  time: fc.integer({ min: 0, max: 100 }),
  agentId: fc.option(ids, { nil: undefined }),
  conversationId: fc.option(ids, { nil: undefined }),
  workflowId: fc.option(ids, { nil: undefined }),
  executionId: fc.option(ids, { nil: undefined }),
  parentExecutionId: fc.option(ids, { nil: undefined }),
});
const filterArb = fc.record(
  {
    level: fc.constantFrom(...LEVELS),
    agentId: ids,
    conversationId: ids,
    workflowId: ids,
    executionId: ids,
    since: fc.integer({ min: 0, max: 100 }),
    until: fc.integer({ min: 0, max: 100 }),
  },
  { requiredKeys: [] },
);

function matchesModel(e: Record<string, any>, f: LogFilter): boolean {
  return (
    (f.level === undefined || LEVEL_VALUES[e.level as keyof typeof LEVEL_VALUES] >= LEVEL_VALUES[f.level]) &&
    (f.agentId === undefined || e.agentId === f.agentId) &&
    (f.conversationId === undefined || e.conversationId === f.conversationId) &&
    (f.workflowId === undefined || e.workflowId === f.workflowId) &&
    (f.executionId === undefined || e.executionId === f.executionId || e.parentExecutionId === f.executionId) &&
    (f.since === undefined || e.time >= f.since) &&
    (f.until === undefined || e.time <= f.until)
  );
}

describe('log query', () => {
  it('returns the most recent matches of the retained window, oldest first', () => {
    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 60 }), filterArb, fc.integer({ min: 1, max: 20 }), fc.integer({ min: 5, max: 40 }), (entries, filter, limit, capacity) => {
        const capture = new LogCapture({ capacity });
        entries.forEach((e, i) => capture.ingest({ ...e, level: LEVEL_VALUES[e.level], msg: `m${i}` }));
        const got = capture.query(filter, limit).map((l) => l.entry.msg);
        const window = entries.map((e, i) => ({ ...e, msg: `m${i}` })).slice(-capacity);
        const expected = window
          .filter((e) => matchesModel(e, filter))
          .slice(-limit)
          .map((e) => e.msg);
        expect(got).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
