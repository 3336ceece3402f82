/**
 * Builders of execution and agent-run records shaped as the workflow and agent engines write them
 * (machines/workflow-execution.machine.ts, machines/agent-run.machine.ts), for projection tests.
 */
import type { LogRecord } from '../../src/log/types.js';

export class RecordSeq {
  seq = 0;
  private readonly heads = new Map<string, number>();
  constructor(public at = Date.parse('2025-01-01T00:00:00.000Z')) {}

  rec(stream: string, type: string, data: Record<string, unknown>, dt = 10): LogRecord {
    this.at += dt;
    const streamSeq = (this.heads.get(stream) ?? 0) + 1;
    this.heads.set(stream, streamSeq);
    return { seq: ++this.seq, stream, streamSeq, type, data, at: this.at, ...(streamSeq === 1 ? { kind: type.startsWith('run.') ? 'agent-run@1' : 'workflow-execution@1' } : {}) };
  }
}

const step = (stepId: string, stepIndex: number, extra: Record<string, unknown> = {}) => ({
  stepIndex,
  stepId,
  stepName: stepId,
  stepType: 'andThen',
  input: { n: stepIndex },
  attempt: 1,
  ...extra,
});

/** A two-step execution that completes. */
export function completedExecution(r: RecordSeq, executionId: string, workflowId = 'wf', extra: Record<string, unknown> = {}): LogRecord[] {
  const s = `exec:${executionId}`;
  return [
    r.rec(s, 'execution.started', { executionId, workflowId, workflowName: 'Flow', stepIds: ['a', 'b'], input: { n: 0 }, context: {}, workflowState: {}, metadata: {}, createdAt: r.at, ...extra }),
    r.rec(s, 'step.started', step('a', 0)),
    r.rec(s, 'step.completed', { ...step('a', 0), output: { n: 1 } }),
    r.rec(s, 'step.started', step('b', 1)),
    r.rec(s, 'step.completed', { ...step('b', 1), output: { n: 2 } }),
    r.rec(s, 'execution.completed', { result: { n: 2 }, workflowName: 'Flow' }),
  ];
}

export function failedExecution(r: RecordSeq, executionId: string): LogRecord[] {
  const s = `exec:${executionId}`;
  return [
    r.rec(s, 'execution.started', { executionId, workflowId: 'wf', workflowName: 'Flow', stepIds: ['a'], input: {}, context: {}, workflowState: {}, metadata: {}, createdAt: r.at }),
    r.rec(s, 'step.started', step('a', 0)),
    r.rec(s, 'step.started', step('a', 0, { attempt: 2 })),
    r.rec(s, 'execution.failed', { error: { message: 'boom', name: 'Error', stepId: 'a' }, attempt: 2, workflowName: 'Flow' }),
  ];
}

const usage = (n: number) => ({ promptTokens: n, completionTokens: n, totalTokens: 2 * n, cachedInputTokens: 0, reasoningTokens: 0 });

/** An agent run with a tool-calling step followed by a final text step. */
export function agentRun(r: RecordSeq, runId: string, agentId = 'assistant', metadata?: Record<string, unknown>): LogRecord[] {
  const s = `run:${runId}`;
  const first = {
    stepNumber: 0,
    text: '',
    toolCalls: [{ toolCallId: 'c1', toolName: 'getWeather', input: { city: 'Oslo' } }],
    toolResults: [{ toolCallId: 'c1', toolName: 'getWeather', input: { city: 'Oslo' }, output: { temp: 3 } }],
    toolErrors: [],
    finishReason: 'tool-calls',
    usage: usage(5),
  };
  const last = { stepNumber: 1, text: 'It is 3 degrees', toolCalls: [], toolResults: [], toolErrors: [], finishReason: 'stop', usage: usage(7) };
  return [
    r.rec(s, 'run.started', { runId, agentId, operationType: 'text', input: 'weather?', options: {}, model: 'demo/echo', ...(metadata ? { metadata } : {}) }),
    r.rec(s, 'run.step', { step: first }),
    r.rec(s, 'run.text-delta', { step: 1, text: 'It is 3 degrees' }),
    r.rec(s, 'run.finished', { steps: [first, last], text: 'It is 3 degrees', usage: usage(12), finishReason: 'stop' }),
  ];
}
