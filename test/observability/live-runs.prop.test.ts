import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/log/types.js';
import { applyLiveRecord, applyLiveRecords, createLiveRunsStore, describeLiveRuns, type LiveRunsContext } from '../../src/observability/live-runs.js';

const EXEC_TYPES = [
  'execution.started',
  'execution.resumed',
  'execution.recovered',
  'execution.suspended',
  'execution.completed',
  'execution.failed',
  'execution.cancelled',
  'step.started',
  'step.completed',
];
const RUN_TYPES = ['run.started', 'run.text-delta', 'run.step', 'run.finished', 'run.failed', 'run.aborted'];

const record = fc.oneof(
  fc.record({ stream: fc.constantFrom('exec:a', 'exec:b', 'exec:a/child'), type: fc.constantFrom(...EXEC_TYPES) }),
  fc.record({ stream: fc.constantFrom('run:x', 'run:y'), type: fc.constantFrom(...RUN_TYPES) }),
  fc.record({ stream: fc.constantFrom('conv:c', 'sys:logs'), type: fc.constantFrom('message.saved', 'x') }),
);

const toRecords = (rs: Array<{ stream: string; type: string }>): LogRecord[] =>
  rs.map((r, i) => ({ seq: i + 1, stream: r.stream, streamSeq: i + 1, type: r.type, at: 1000 + i, data: { workflowName: 'W', agentId: 'ag' } }));

/** The model: a stream is live when its last lifecycle record made it live (top-level executions only). */
function model(records: LogRecord[]) {
  const executions = new Set<string>();
  const runs = new Set<string>();
  for (const r of records) {
    if (r.stream === 'exec:a' || r.stream === 'exec:b') {
      const id = r.stream.slice(5);
      if (['execution.started', 'execution.resumed', 'execution.recovered'].includes(r.type)) executions.add(id);
      if (['execution.suspended', 'execution.completed', 'execution.failed', 'execution.cancelled'].includes(r.type)) executions.delete(id);
    }
    if (r.stream.startsWith('run:')) {
      const id = r.stream.slice(4);
      if (r.type === 'run.started') runs.add(id);
      if (['run.finished', 'run.failed', 'run.aborted'].includes(r.type)) runs.delete(id);
    }
  }
  return { executions: [...executions].sort(), runs: [...runs].sort() };
}

describe('live runs', () => {
  it('holds exactly the top-level executions and agent runs whose last lifecycle record left them in flight', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 60 }), (rs) => {
        const records = toRecords(rs);
        const store = createLiveRunsStore();
        for (const r of records) store.trigger.committed({ record: r });
        const ctx = store.getSnapshot().context;
        const want = model(records);
        expect(Object.keys(ctx.executions).sort()).toEqual(want.executions);
        expect(Object.keys(ctx.agentRuns).sort()).toEqual(want.runs);
        const described = describeLiveRuns(ctx);
        expect(described.executions.count).toBe(want.executions.length);
        expect(described.agentRuns.count).toBe(want.runs.length);
      }),
      { numRuns: 300 },
    );
  });

  it('folds a batch of records to the same context as record by record (keys in the same order), without touching the context it started from', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 40 }), fc.array(record, { maxLength: 40 }), (before, batch) => {
        const start = toRecords(before).reduce(applyLiveRecord, { executions: {}, agentRuns: {} });
        const frozen = structuredClone(start);
        const records = toRecords(batch);
        const one = records.reduce(applyLiveRecord, start);
        const many = applyLiveRecords(start, records);
        expect(many).toEqual(one);
        expect(Object.keys(many.executions)).toEqual(Object.keys(one.executions));
        expect(Object.keys(many.agentRuns)).toEqual(Object.keys(one.agentRuns));
        expect(start).toEqual(frozen);
        if (one === start) expect(many).toBe(start);
        const store = createLiveRunsStore();
        store.trigger.folded({ records: [...toRecords(before), ...records] });
        expect(store.getSnapshot().context).toEqual(toRecords(before).concat(records).reduce(applyLiveRecord, { executions: {}, agentRuns: {} }));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the order record-by-record folding leaves the keys in: an agent run started again keeps its place', () => {
    const before = toRecords([
      { stream: 'run:x', type: 'run.started' },
      { stream: 'run:y', type: 'run.started' },
    ]);
    const start = before.reduce(applyLiveRecord, { executions: {}, agentRuns: {} });
    const again = toRecords([{ stream: 'run:x', type: 'run.started' }]);
    expect(Object.keys(applyLiveRecords(start, again).agentRuns)).toEqual(Object.keys(again.reduce(applyLiveRecord, start).agentRuns));
    expect(Object.keys(applyLiveRecords(start, again).agentRuns)).toEqual(['x', 'y']);
  });

  it('returns the same context for records that change nothing, so subscribers are not woken', () => {
    const ctx: LiveRunsContext = { executions: {}, agentRuns: {} };
    const [r] = toRecords([{ stream: 'exec:a', type: 'step.completed' }]);
    expect(applyLiveRecord(ctx, r)).toBe(ctx);
  });

  it('keeps the earliest moment an execution went live when it is recovered while live', () => {
    const records = toRecords([
      { stream: 'exec:a', type: 'execution.started' },
      { stream: 'exec:a', type: 'execution.recovered' },
    ]);
    const ctx = records.reduce(applyLiveRecord, { executions: {}, agentRuns: {} });
    expect(ctx.executions.a).toEqual({ id: 'a', name: 'W', since: 1000 });
  });
});
