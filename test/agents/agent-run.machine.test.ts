/**
 * The agent-run machine through pure transitions: the start emits the `generate` effect, steps are
 * counted, each terminal event ends the run in its own final state, and a finished run accepts
 * nothing more (a late record would be a bug). Replaying the records rebuilds the same snapshot.
 */
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { agentRunMachine, type AgentRunEvent, type AgentRunStarted } from '../../machines/agent-run.machine.js';
import { createAgentRunKind } from '../../src/agents/run-kind.js';
import { replayRecords } from '../../src/runtime/actor-host.js';
import type { LogRecord } from '../../src/log/types.js';

const started: AgentRunStarted = { runId: 'r1', agentId: 'a', operationType: 'text', input: 'hi', options: {}, model: 'demo' };
const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2, cachedInputTokens: 0, reasoningTokens: 0 };
const step = { stepNumber: 0, text: '', toolCalls: [], toolResults: [], toolErrors: [], finishReason: 'tool-calls', usage };
const finished: AgentRunEvent = { type: 'run.finished', steps: [], text: 'ok', usage, finishReason: 'stop' };

describe('agent-run machine', () => {
  it('starts running and asks for the generate effect', () => {
    const [s, actions] = initialTransition(agentRunMachine, started);
    expect(s.value).toBe('running');
    expect(actions.map((a) => a.type)).toEqual(['generate']);
    expect(s.context).toEqual({ agentId: 'a', operationType: 'text', steps: 0, deltas: 0, pending: [] });
  });

  it('counts steps and accepts batched text deltas while running', () => {
    let [s] = initialTransition(agentRunMachine, started);
    // the actor host asks can() before it records anything
    for (const e of [{ type: 'run.text-delta', step: 0, text: 'par' }, { type: 'run.step', step }, finished] as AgentRunEvent[]) expect(s.can(e)).toBe(true);
    [s] = transition(agentRunMachine, s, { type: 'run.text-delta', step: 0, text: 'par' });
    expect(s.context.deltas).toBe(1);
    [s] = transition(agentRunMachine, s, { type: 'run.step', step });
    [s] = transition(agentRunMachine, s, { type: 'run.step', step: { ...step, stepNumber: 1 } });
    expect(s.value).toBe('running');
    expect(s.context.steps).toBe(2);
  });

  it.each([
    [finished, 'completed'],
    [{ type: 'run.failed', error: 'boom' } as AgentRunEvent, 'failed'],
    [{ type: 'run.aborted', reason: 'Client disconnected' } as AgentRunEvent, 'cancelled'],
  ])('ends in a final state on %j', (event, state) => {
    const [s0] = initialTransition(agentRunMachine, started);
    const [s] = transition(agentRunMachine, s0, event);
    expect(s.value).toBe(state);
    expect(s.status).toBe('done');
    for (const late of [finished, { type: 'run.failed', error: 'x' }, { type: 'run.text-delta', step: 0, text: 'x' }] as AgentRunEvent[]) expect(s.can(late)).toBe(false);
  });

  it('rebuilds the same snapshot from its records without running effects', () => {
    const kind = createAgentRunKind(new Map());
    const rec = (streamSeq: number, type: string, data: unknown): LogRecord => ({ seq: streamSeq, stream: 'run:r1', streamSeq, type, data, at: 0 });
    const records = [rec(1, 'run.started', started), rec(2, 'run.step', { step }), rec(3, 'run.finished', { ...finished, type: undefined })];
    const s = replayRecords(kind, 'run:r1', records);
    expect(s.value).toBe('completed');
    expect(s.context.steps).toBe(1);
    expect(kind.isTerminal!(s)).toBe(true);
  });

  it('waits for every approval of a pause, then runs again with a new generate effect', () => {
    let [s] = initialTransition(agentRunMachine, started);
    const approvals = [
      { approvalId: 'a1', toolCallId: 'c1', toolName: 'refund', args: {} },
      { approvalId: 'a2', toolCallId: 'c2', toolName: 'refund', args: {} },
    ];
    [s] = transition(agentRunMachine, s, { type: 'run.approval-requested', approvals, messages: [] });
    expect(s.value).toBe('awaitingApproval');
    // a run waiting for a person is not closed as interrupted, nor finished
    expect(s.can({ type: 'run.failed', error: 'x' })).toBe(false);
    expect(s.can({ type: 'run.approval-answered', approvalId: 'other', approved: true })).toBe(false);
    let actions;
    [s, actions] = transition(agentRunMachine, s, { type: 'run.approval-answered', approvalId: 'a2', approved: false });
    expect(s.value).toBe('awaitingApproval');
    expect(actions).toEqual([]);
    expect(s.can({ type: 'run.approval-answered', approvalId: 'a2', approved: true })).toBe(false);
    [s, actions] = transition(agentRunMachine, s, { type: 'run.approval-answered', approvalId: 'a1', approved: true });
    expect(s.value).toBe('running');
    expect(actions.map((a) => a.type)).toEqual(['generate']);
  });
});
