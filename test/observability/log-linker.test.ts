/**
 * The log linker: a step's log line written before the projection has seen the step start waits for it and is
 * linked to the step span; lines keep their order; a line whose span never opens goes out after the wait bound.
 */
import { describe, expect, it } from 'vitest';
import { LogLinker, type LogLink } from '../../src/observability/log-linker.js';
import { LogCapture } from '../../src/observability/log-capture.js';
import type { CapturedLog } from '../../src/observability/log-entry.js';
import { TraceProjection } from '../../src/observability/traces.js';
import { TraceStore } from '../../src/observability/traces-store.js';
import { DEFAULT_SPAN_MAPPING } from '../../src/observability/span-mapping.js';
import { spanIdFor, traceIdFor } from '../../src/kernel/span-types.js';
import { RecordSeq, completedExecution } from './records.js';
import { ManualClock } from '../helpers/manual-clock.js';

function setup(maxWaitMs = 1000) {
  const traces = new TraceProjection(new TraceStore(), DEFAULT_SPAN_MAPPING);
  const out: Array<{ msg: string; link: LogLink }> = [];
  const clock = new ManualClock();
  const linker = new LogLinker(traces, (log, link) => out.push({ msg: log.entry.msg, link }), { maxWaitMs, clock });
  const capture = new LogCapture();
  const log = (obj: Record<string, unknown>): CapturedLog => capture.ingest({ level: 30, ...obj });
  return { traces, out, linker, log, clock };
}

describe('LogLinker', () => {
  it('holds a step line until its step span opens, then links it there, keeping later lines behind it', () => {
    const { traces, out, linker, log } = setup();
    const records = completedExecution(new RecordSeq(), 'e1');
    traces.apply(records[0]);
    linker.push(log({ msg: 'inside step a', executionId: 'e1', stepId: 'a' }));
    linker.push(log({ msg: 'unrelated' }));
    expect(out).toEqual([]);
    traces.apply(records[1]);
    linker.flush();
    expect(out.map((o) => o.msg)).toEqual(['inside step a', 'unrelated']);
    expect(out[0].link).toEqual({ traceId: traceIdFor('exec:e1'), spanId: spanIdFor('exec:e1', 'step|a|1'), entity: { type: 'workflow', id: 'wf' } });
    expect(out[1].link).toEqual({ entity: {} });
  });

  it('links execution lines to the root span and names the entity of lines outside any trace', () => {
    const { traces, out, linker, log } = setup();
    for (const r of completedExecution(new RecordSeq(), 'e2')) traces.apply(r);
    linker.push(log({ msg: 'engine line', executionId: 'e2', workflowId: 'wf' }));
    linker.push(log({ msg: 'agent line', agentId: 'bot' }));
    expect(out).toEqual([
      { msg: 'engine line', link: { traceId: traceIdFor('exec:e2'), spanId: spanIdFor('exec:e2', 'root'), entity: { type: 'workflow', id: 'wf' } } },
      { msg: 'agent line', link: { entity: { type: 'agent', id: 'bot' } } },
    ]);
  });

  it('releases a line whose span never opens after the wait bound', () => {
    const { out, linker, log, clock } = setup(30);
    linker.push(log({ msg: 'orphan', executionId: 'gone', stepId: 's' }));
    expect(out).toEqual([]);
    clock.advance(29);
    expect(out).toEqual([]);
    clock.advance(2);
    expect(out).toEqual([{ msg: 'orphan', link: { traceId: traceIdFor('exec:gone'), spanId: spanIdFor('exec:gone', 'step|s|1'), entity: {} } }]);
  });

  it('never holds tool-call lines: their span ids are known before the step is recorded', () => {
    const { out, linker, log } = setup();
    linker.push(log({ msg: 'tool', runId: 'r', toolCallId: 'c1' }));
    expect(out).toEqual([{ msg: 'tool', link: { traceId: traceIdFor('run:r'), spanId: spanIdFor('run:r', 'tool|c1|1'), entity: {} } }]);
  });
});
