/**
 * The traces projection: executions, steps, agent runs, LLM steps and tool calls become spans with parent links,
 * timing and statuses; nested runs join their parent's trace; unknown record types are ignored; span events are
 * emitted only for live records.
 */
import { describe, expect, it } from 'vitest';
import { TraceProjection, type SpanChange } from '../../src/observability/traces.js';
import { TraceStore } from '../../src/observability/traces-store.js';
import { DEFAULT_SPAN_MAPPING } from '../../src/observability/span-mapping.js';
import { buildTree, spanIdFor, traceIdFor } from '../../src/kernel/span-types.js';
import { RecordSeq, agentRun, completedExecution, failedExecution } from './records.js';

function project(records: ReturnType<typeof completedExecution>, capacity?: number) {
  const store = new TraceStore(capacity);
  const p = new TraceProjection(store, DEFAULT_SPAN_MAPPING);
  const changes: SpanChange[] = [];
  p.onChange((c) => changes.push(c));
  for (const r of records) p.apply(r);
  return { store, p, changes };
}

/** A parent execution whose step `sub` runs the child execution `c` to its end (the parent stays open). */
function nestedChild(r: RecordSeq) {
  const parent = 'exec:p';
  const st = { stepIndex: 0, stepId: 'sub', stepName: 'sub', stepType: 'andWorkflow', input: {}, attempt: 1 };
  const records = [
    r.rec(parent, 'execution.started', { executionId: 'p', workflowId: 'parent', workflowName: 'Parent', stepIds: ['sub'], input: {}, context: {}, workflowState: {}, metadata: {}, createdAt: 0 }),
    r.rec(parent, 'step.started', st),
    ...completedExecution(r, 'c', 'child', { parentExecutionId: 'p', parentStepId: 'sub' }),
  ];
  return { parent, st, records };
}

describe('span and trace ids', () => {
  it('are the same ids as ever for the same streams and keys (they are recorded in start records and linked from logs)', () => {
    expect(traceIdFor('exec:e1')).toBe('f67dde6bc56db424afbcc8451305c3e1');
    expect(spanIdFor('exec:e1', 'root')).toBe('c5fe543629d9b594');
    expect(spanIdFor('run:r', 'tool|c1|1')).toBe('702f14366e851efe');
    expect(traceIdFor('')).toBe('bbe31d18b658aeb59a99825907ad2cb5');
    expect(spanIdFor('exec:ü/ß', 'step|a|2')).toBe('b8c9c996d647e4ae');
  });
});

describe('traces projection: workflow executions', () => {
  it('makes the execution the root span and each step a child span, with timing and OK statuses', () => {
    const r = new RecordSeq();
    const records = completedExecution(r, 'e1', 'wf');
    const { store } = project(records);
    const traceId = traceIdFor('exec:e1');
    const spans = store.traceSpans(traceId);
    expect(spans.map((s) => s.name)).toEqual(['workflow:Flow', 'step:a', 'step:b']);
    const [root, a, b] = spans;
    expect(root.parentSpanId).toBeUndefined();
    expect(a.parentSpanId).toBe(root.spanId);
    expect(b.parentSpanId).toBe(root.spanId);
    expect(root.attributes).toMatchObject({ 'entity.id': 'wf', 'entity.type': 'workflow', 'entity.name': 'Flow', 'workflow.execution.id': 'e1' });
    expect(a.attributes).toMatchObject({ 'workflow.step.id': 'a', 'workflow.step.index': 0, 'workflow.step.type': 'andThen', output: '{"n":1}' });
    for (const s of spans) {
      expect(s.status.code).toBe(1);
      expect(s.traceId).toHaveLength(32);
      expect(s.spanId).toHaveLength(16);
      expect(s.duration).toBe(Date.parse(s.endTime!) - Date.parse(s.startTime));
    }
    expect(root.startTime).toBe(new Date(records[0].at).toISOString());
    expect(root.endTime).toBe(new Date(records[5].at).toISOString());
    expect(a.duration).toBe(10);
    const tree = buildTree(spans);
    expect(tree).toHaveLength(1);
    expect(tree[0].children.map((c) => [c.name, c.depth])).toEqual([
      ['step:a', 1],
      ['step:b', 1],
    ]);
  });

  it('marks a retried attempt and the failing step and execution as errors', () => {
    const { store } = project(failedExecution(new RecordSeq(), 'e2'));
    const spans = store.traceSpans(traceIdFor('exec:e2'));
    expect(spans.map((s) => [s.name, s.status.code])).toEqual([
      ['workflow:Flow', 2],
      ['step:a', 2],
      ['step:a', 2],
    ]);
    expect(spans[0].status.message).toBe('boom');
    expect(spans[1].events.map((e) => e.name)).toEqual(['retry']);
    expect(spans[2].status.message).toBe('boom');
  });

  it('ends the step at a suspension and keeps the execution open until it resumes and completes', () => {
    const r = new RecordSeq();
    const s = 'exec:e3';
    const st = { stepIndex: 0, stepId: 'ask', stepName: 'ask', stepType: 'andThen', input: {}, attempt: 1 };
    const { store, p } = project([
      r.rec(s, 'execution.started', { executionId: 'e3', workflowId: 'wf', workflowName: 'Flow', stepIds: ['ask'], input: {}, context: {}, workflowState: {}, metadata: {}, createdAt: 0 }),
      r.rec(s, 'step.started', st),
      r.rec(s, 'execution.suspended', { ...st, reason: 'need input', workflowName: 'Flow' }),
    ]);
    const root = store.getSpan(spanIdFor(s, 'root'))!;
    expect(root.endTime).toBeUndefined();
    expect(root.events.map((e) => e.name)).toEqual(['execution.suspended']);
    const ask1 = store.getSpan(spanIdFor(s, 'step|ask|1'))!;
    expect(ask1.status.code).toBe(1);
    expect(ask1.events[0]).toMatchObject({ name: 'suspended', attributes: { reason: 'need input' } });
    p.apply(r.rec(s, 'execution.resumed', { stepIndex: 0, stepId: 'ask', input: {}, workflowName: 'Flow' }));
    p.apply(r.rec(s, 'step.started', { ...st, attempt: 2 }));
    p.apply(r.rec(s, 'step.completed', { ...st, attempt: 2, output: 1 }));
    p.apply(r.rec(s, 'execution.completed', { result: 1, workflowName: 'Flow' }));
    expect(store.traceSpans(traceIdFor(s)).map((x) => [x.name, x.status.code, x.endTime !== undefined])).toEqual([
      ['workflow:Flow', 1, true],
      ['step:ask', 1, true],
      ['step:ask', 1, true],
    ]);
    expect(root.events.map((e) => e.name)).toEqual(['execution.suspended', 'execution.resumed']);
  });

  it('puts a nested execution in its parent trace under the parent step', () => {
    const r = new RecordSeq();
    const { parent, st, records: started } = nestedChild(r);
    const records = [...started, r.rec(parent, 'step.completed', { ...st, output: 2 }), r.rec(parent, 'execution.completed', { result: 2, workflowName: 'Parent' })];
    const { store } = project(records);
    const spans = store.traceSpans(traceIdFor(parent));
    expect(spans).toHaveLength(5);
    const childRoot = store.getSpan(spanIdFor('exec:c', 'root'))!;
    expect(childRoot.traceId).toBe(traceIdFor(parent));
    expect(childRoot.parentSpanId).toBe(spanIdFor(parent, 'step|sub|1'));
    expect(store.getTrace(traceIdFor('exec:c'))).toBeUndefined();
    expect(store.listTraces({ entityType: 'workflow', entityId: 'parent' }, 10).map((t) => t.traceId)).toEqual([traceIdFor(parent)]);
    expect(store.listTraces({ entityId: 'child' }, 10)).toEqual([]);
  });

  it('ignores record types it does not know and records that carry unexpected data', () => {
    const r = new RecordSeq();
    const s = 'exec:odd';
    const { store } = project([
      r.rec(s, 'execution.started', { executionId: 'odd', workflowId: 'wf', workflowName: 'Flow' }),
      r.rec(s, 'execution.teleported', { anything: true }),
      r.rec(s, 'step.completed', { stepId: 'never-started' }),
      r.rec('conv:1', 'message.added', { text: 'hi' }),
      { ...r.rec(s, 'step.started', {}), data: null },
      r.rec(s, 'run.step', { step: 'not an object' }),
    ]);
    expect(store.traceSpans(traceIdFor(s)).map((x) => x.name)).toEqual(['workflow:Flow', 'step:step']);
  });
});

describe('traces projection: agent runs', () => {
  it('makes a run the root, LLM steps its children and tool calls children of the step that made them', () => {
    const r = new RecordSeq();
    const { store } = project(agentRun(r, 'r1'));
    const spans = store.traceSpans(traceIdFor('run:r1'));
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(['agent:assistant', 'llm:step 1', 'llm:step 2', 'tool:getWeather']);
    const root = byName['agent:assistant'];
    expect(root.attributes).toMatchObject({ 'entity.type': 'agent', 'entity.id': 'assistant', 'llm.model': 'demo/echo', 'usage.total_tokens': 24 });
    expect(byName['llm:step 1'].parentSpanId).toBe(root.spanId);
    expect(byName['llm:step 1'].kind).toBe(2);
    expect(byName['llm:step 1'].attributes).toMatchObject({ 'usage.prompt_tokens': 5, 'llm.finish_reason': 'tool-calls' });
    expect(byName['tool:getWeather'].parentSpanId).toBe(byName['llm:step 1'].spanId);
    expect(byName['tool:getWeather'].attributes).toMatchObject({ 'tool.name': 'getWeather', input: '{"city":"Oslo"}', output: '{"temp":3}' });
    expect(byName['llm:step 2'].attributes).toMatchObject({ 'usage.completion_tokens': 7, 'llm.finish_reason': 'stop', output: 'It is 3 degrees' });
    expect(spans.every((s) => s.status.code === 1 && s.endTime)).toBe(true);
  });

  it('nests a sub-agent run under the delegating LLM step and an andAgent run under its workflow step', () => {
    const r = new RecordSeq();
    const parentRun = 'run:parent';
    const records = [
      r.rec(parentRun, 'run.started', { runId: 'parent', agentId: 'boss', operationType: 'text', input: 'x', options: {}, model: 'm' }),
      ...agentRun(r, 'sub', 'helper', { parentRunId: 'parent', parentAgentId: 'boss' }),
      r.rec(parentRun, 'run.failed', { error: 'provider down' }),
    ];
    const { store } = project(records);
    const subRoot = store.getSpan(spanIdFor('run:sub', 'root'))!;
    expect(subRoot.traceId).toBe(traceIdFor(parentRun));
    expect(subRoot.parentSpanId).toBe(spanIdFor(parentRun, 'llm|1'));
    const parentRoot = store.getSpan(spanIdFor(parentRun, 'root'))!;
    expect(parentRoot.status).toEqual({ code: 2, message: 'provider down' });

    const r2 = new RecordSeq();
    const exec = 'exec:w';
    const st = { stepIndex: 0, stepId: 'ask-agent', stepName: 'ask-agent', stepType: 'andAgent', input: {}, attempt: 1 };
    const { store: s2 } = project([
      r2.rec(exec, 'execution.started', { executionId: 'w', workflowId: 'wf', workflowName: 'Flow' }),
      r2.rec(exec, 'step.started', st),
      ...agentRun(r2, 'ar', 'assistant', { executionId: 'w', stepId: 'ask-agent' }),
    ]);
    const runRoot = s2.getSpan(spanIdFor('run:ar', 'root'))!;
    expect(runRoot.traceId).toBe(traceIdFor(exec));
    expect(runRoot.parentSpanId).toBe(spanIdFor(exec, 'step|ask-agent|1'));
    expect(runRoot.attributes['entity.id']).toBe('assistant');
  });

  it('ends an aborted run without an error status', () => {
    const r = new RecordSeq();
    const s = 'run:ab';
    const { store } = project([
      r.rec(s, 'run.started', { runId: 'ab', agentId: 'a', operationType: 'stream', input: 'x', options: {}, model: 'm' }),
      r.rec(s, 'run.aborted', { reason: 'Client disconnected' }),
    ]);
    const spans = store.traceSpans(traceIdFor(s));
    expect(spans.map((x) => [x.name, x.status.code, x.endTime !== undefined])).toEqual([
      ['agent:a', 0, true],
      ['llm:step 1', 0, true],
    ]);
    expect(spans[0].events[0]).toMatchObject({ name: 'aborted', attributes: { reason: 'Client disconnected' } });
  });
});

describe('traces projection: live events and bounds', () => {
  it('emits span events only for records after the boot replay, in record order', () => {
    const r = new RecordSeq();
    const first = completedExecution(r, 'old');
    const second = completedExecution(r, 'new');
    const store = new TraceStore();
    const p = new TraceProjection(store, DEFAULT_SPAN_MAPPING);
    p.liveAfter = first[first.length - 1].seq;
    const changes: SpanChange[] = [];
    p.onChange((c) => changes.push(c));
    for (const rec of [...first, ...second]) p.apply(rec);
    expect(changes.map((c) => `${c.type} ${c.span.name}`)).toEqual([
      'span:start workflow:Flow',
      'span:start step:a',
      'span:end step:a',
      'span:start step:b',
      'span:end step:b',
      'span:end workflow:Flow',
    ]);
    expect(changes.every((c) => c.span.traceId === traceIdFor('exec:new') && c.entity.id === 'wf')).toBe(true);
  });

  it('emits span:error for a span that ends with an error status', () => {
    const { changes } = project(failedExecution(new RecordSeq(), 'x'));
    expect(changes.filter((c) => c.type === 'span:error').map((c) => c.span.name)).toEqual(['step:a', 'step:a', 'workflow:Flow']);
  });

  it('evicts the oldest spans past the capacity and drops a trace with its last span', () => {
    const r = new RecordSeq();
    const records = [...completedExecution(r, 'e1'), ...completedExecution(r, 'e2'), ...completedExecution(r, 'e3')];
    const { store } = project(records, 5);
    expect(store.spanCount).toBe(5);
    expect(store.getTrace(traceIdFor('exec:e1'))).toBeUndefined();
    expect(store.traceSpans(traceIdFor('exec:e2')).map((s) => s.name)).toEqual(['step:a', 'step:b']);
    expect(store.traceSpans(traceIdFor('exec:e3'))).toHaveLength(3);
    expect(store.listTraces({}, 10).map((t) => t.traceId)).toEqual([traceIdFor('exec:e3'), traceIdFor('exec:e2')]);
  });

  it('keeps what a finished stream needs: records after its end continue its counters, its trace and its entity', () => {
    const r = new RecordSeq();
    const { parent, records: started } = nestedChild(r);
    const records = [...started, ...agentRun(r, 'r1')];
    const { store, p } = project(records);
    const finished = p.streamInfo('exec:c')!;
    expect(finished).toMatchObject({ traceId: traceIdFor(parent), rootOpen: false, entity: { type: 'workflow', id: 'parent' } });
    expect(finished.open).toBeUndefined();
    expect([...finished.counts!]).toEqual([
      ['step|a', 1],
      ['step|b', 1],
    ]);
    // a snapshot's parts, taken now and built later, give the states as they were when taken
    const dumped = p.dumpStreams();
    const parts = p.dumpStreamParts(2);
    expect(parts).toHaveLength(Math.ceil(dumped.length / 2));
    // the finished run continues (a later turn of the same run stream): its LLM steps count on from 2
    p.apply(r.rec('run:r1', 'run.step', { step: { stepNumber: 2, text: 'more', toolCalls: [], toolResults: [], toolErrors: [], finishReason: 'stop' } }));
    const spans = store.traceSpans(traceIdFor('run:r1'));
    expect(spans.filter((s) => s.name.startsWith('llm:')).map((s) => [s.name, s.spanId])).toEqual([1, 2, 3, 4].map((n) => [`llm:step ${n}`, spanIdFor('run:r1', `llm|${n}`)]));
    expect(parts.flatMap((part) => part())).toEqual(dumped);
    expect(p.dumpStreams()).not.toEqual(dumped);
    expect(p.locate('exec:c', 'step|a')).toEqual({ traceId: traceIdFor(parent), spanId: spanIdFor('exec:c', 'step|a|1'), entity: { type: 'workflow', id: 'parent' } });
    // a snapshot's dump and load round-trip finished and open streams alike
    const again = new TraceProjection(new TraceStore(), DEFAULT_SPAN_MAPPING);
    again.loadStreams(p.dumpStreams());
    expect(again.dumpStreams()).toEqual(p.dumpStreams());
    expect(again.streamInfo(parent)).toMatchObject({ rootOpen: true, open: new Map([['step|sub', spanIdFor(parent, 'step|sub|1')]]) });
  });

  it('skips records it has already applied', () => {
    const r = new RecordSeq();
    const records = completedExecution(r, 'e1');
    const { store, p, changes } = project(records);
    const before = changes.length;
    for (const rec of records) p.apply(rec);
    expect(changes.length).toBe(before);
    expect(store.spanCount).toBe(3);
  });
});
