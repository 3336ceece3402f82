/**
 * The workflow engine on an in-memory log: step kinds, retries, failures, shared state, custom
 * events, sub-workflows, agent steps, recovery after a simulated crash and graceful stop.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { executionResult, resumeExecution, startExecution } from '../../src/workflows/commands.js';
import { andThen, andWorkflow, createWorkflow } from '../../src/workflows/builder.js';
import { foldExecution } from '../../src/workflows/executions-view.js';
import { executionStream } from '../../src/workflows/events.js';
import type { WorkflowAgentRunner } from '../../src/contract/agent-bridge.js';
import { agentStep, branching, child, failing, flaky, gated, parent, release, stateful } from './fixtures.js';
import { makeEngine, recordsOf, typesOf } from './helpers.js';
import { until } from '../helpers/until.js';

describe('step kinds', () => {
  it('runs andWhen, andAll and andRace: nested output, outputs in declaration order, first settled wins without waiting for the loser', async () => {
    const engine = makeEngine([branching]);
    const started = Date.now();
    const run = await startExecution(engine, 'branching', { go: true });
    const rec = await run.settled;
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(rec.type).toBe('execution.completed');
    const view = foldExecution(await recordsOf(engine, run.executionId));
    const outputs = view.events.filter((e) => e.type === 'step-complete').map((e) => [e.from, e.output]);
    expect(outputs).toEqual([
      ['maybe', { went: true }],
      ['both', ['A', 'B']],
      ['race', 'quick'],
    ]);
  });

  it('skips a false andWhen and passes data through unchanged', async () => {
    const engine = makeEngine([branching]);
    const run = await startExecution(engine, 'branching', { go: false });
    await run.settled;
    const view = foldExecution(await recordsOf(engine, run.executionId));
    const maybe = view.events.find((e) => e.type === 'step-complete' && e.from === 'maybe')!;
    expect(maybe.status).toBe('skipped');
    const both = view.events.find((e) => e.type === 'step-start' && e.from === 'both')!;
    expect(both.input).toEqual({ go: false });
  });

  it('re-runs a throwing step up to its retries and records only the successful outcome', async () => {
    const engine = makeEngine([flaky]);
    const run = await startExecution(engine, 'flaky', undefined);
    const rec = await run.settled;
    expect(rec.type).toBe('execution.completed');
    expect((rec.data as { result: { ok: boolean } }).result.ok).toBe(true);
    expect(typesOf(await recordsOf(engine, run.executionId))).toEqual(['execution.started', 'step.started', 'step.completed', 'execution.completed']);
  });

  it('ends the run in error with the step id when a step throws, with no step-complete for it', async () => {
    const engine = makeEngine([failing]);
    const run = await startExecution(engine, 'failing', { n: 2 });
    const rec = await run.settled;
    expect(rec.type).toBe('execution.failed');
    expect(() => executionResult(rec, run.executionId, run.createdAt)).toThrow('Failed to execute workflow');
    const view = foldExecution(await recordsOf(engine, run.executionId));
    expect(view.status).toBe('error');
    expect(view.error).toEqual({ name: 'Error', message: 'boom', stepId: 'explode' });
    expect(view.metadata.errorMessage).toBe('boom');
    expect(view.events.map((e) => `${e.type}:${e.from}`)).toEqual(['workflow-start:Failing', 'step-start:double', 'step-complete:double', 'step-start:explode', 'workflow-error:Failing']);
  });

  it('shares workflowState, keeps the init data and earlier outputs readable, records custom events and ignores andTap failures', async () => {
    const engine = makeEngine([stateful]);
    const run = await startExecution(engine, 'stateful', { hello: 1 }, { workflowState: { counted: 4 }, context: { tenant: 't1' }, userId: 'u1' });
    const rec = await run.settled;
    expect(rec.type).toBe('execution.completed');
    expect((rec.data as { result: unknown }).result).toEqual({ state: { counted: 5 }, init: { hello: 1 }, first: { step: 1 }, context: { tenant: 't1' }, userId: 'u1' });
    const records = await recordsOf(engine, run.executionId);
    const custom = records.find((r) => r.type === 'step.event')!;
    expect(custom.data).toMatchObject({ stepId: 'count', event: { type: 'progress', pct: 50 } });
    const view = foldExecution(records);
    expect(view.workflowState).toEqual({ counted: 5 });
    expect(view.events.some((e) => e.type === 'progress')).toBe(false);
  });
});

describe('sub-workflows', () => {
  it('suspends the parent when the child suspends, and resuming the parent resumes the child', async () => {
    const engine = makeEngine([parent]);
    const run = await startExecution(engine, 'parent', { v: 2 });
    const suspended = await run.settled;
    expect(suspended.type).toBe('execution.suspended');
    expect(suspended.data).toMatchObject({ stepId: 'sub', reason: 'child needs input', suspendData: { v: 21 } });
    const childRecords = await engine.log.readStream(executionStream(`${run.executionId}/sub`));
    expect(childRecords[0].data).toMatchObject({ parentExecutionId: run.executionId, workflowId: 'child', input: { v: 20 } });
    expect(typesOf(childRecords).at(-1)).toBe('execution.suspended');

    const resumed = await resumeExecution(engine, 'parent', run.executionId, { add: 5 });
    const done = await resumed.settled;
    expect(done.type).toBe('execution.completed');
    expect((done.data as { result: unknown }).result).toEqual({ final: 26 });
    expect(typesOf(await engine.log.readStream(executionStream(`${run.executionId}/sub`))).at(-1)).toBe('execution.completed');
  });

  it("checks resume data against the suspended child's resume schema before anything is recorded", async () => {
    const engine = makeEngine([parent]);
    const run = await startExecution(engine, 'parent', { v: 2 });
    await run.settled;
    const before = (await recordsOf(engine, run.executionId)).length;
    const childBefore = (await engine.log.readStream(executionStream(`${run.executionId}/sub`))).length;
    await expect(resumeExecution(engine, 'parent', run.executionId, { add: 'five' })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^Resume data validation failed: add: /) });
    await expect(resumeExecution(engine, 'parent', run.executionId, undefined)).rejects.toMatchObject({ status: 400 });
    expect((await recordsOf(engine, run.executionId)).length).toBe(before);
    expect((await engine.log.readStream(executionStream(`${run.executionId}/sub`))).length).toBe(childBefore);
    const done = await (await resumeExecution(engine, 'parent', run.executionId, { add: 5 })).settled;
    expect((done.data as { result: unknown }).result).toEqual({ final: 26 });
  });

  it('checks resume data against a grandchild suspended two sub-workflows down', async () => {
    const middle = createWorkflow({ id: 'middle', name: 'Middle', input: z.object({ v: z.number() }) }, andWorkflow({ id: 'inner', workflow: child }));
    const top = createWorkflow({ id: 'top', name: 'Top', input: z.object({ v: z.number() }) }, andWorkflow({ id: 'mid', workflow: middle }));
    const engine = makeEngine([top]);
    const run = await startExecution(engine, 'top', { v: 1 });
    expect((await run.settled).type).toBe('execution.suspended');
    await expect(resumeExecution(engine, 'top', run.executionId, { add: true })).rejects.toMatchObject({ status: 400 });
    const done = await (await resumeExecution(engine, 'top', run.executionId, { add: 3 })).settled;
    expect(done.type).toBe('execution.completed');
    expect((done.data as { result: unknown }).result).toEqual({ v: 5 });
  });
});

describe('agent steps', () => {
  it('fails with a clear message when no agent runner is available', async () => {
    const engine = makeEngine([agentStep]);
    const run = await startExecution(engine, 'agent-step', { q: 'x' });
    const rec = await run.settled;
    expect(rec.type).toBe('execution.failed');
    expect((rec.data as { error: { message: string } }).error.message).toBe("Cannot run agent 'assistant': no agent runner is available (the agents module is not loaded)");
  });

  it('calls the agents module runner with the prompt, schema, context and signal, and sums token usage into metadata', async () => {
    const calls: unknown[] = [];
    const agentRunner: WorkflowAgentRunner = {
      async run(agentId, prompt, options) {
        calls.push({ agentId, prompt, hasSchema: !!options.schema, context: options.context, userId: options.userId, aborted: options.signal.aborted });
        return { text: '{"a":"42"}', object: { a: '42' }, usage: { promptTokens: 3, completionTokens: 4, totalTokens: 7 } };
      },
    };
    const engine = makeEngine([agentStep], { agentRunner: () => agentRunner });
    const run = await startExecution(engine, 'agent-step', { q: 'life' }, { context: { k: 1 }, userId: 'u' });
    const rec = await run.settled;
    expect((rec.data as { result: unknown }).result).toEqual({ a: '42' });
    expect(calls).toEqual([{ agentId: 'assistant', prompt: 'Answer: life', hasSchema: true, context: { k: 1 }, userId: 'u', aborted: false }]);
    const view = foldExecution(await recordsOf(engine, run.executionId));
    expect(view.metadata.usage).toEqual({ promptTokens: 3, completionTokens: 4, totalTokens: 7 });
  });
});

describe('recovery and shutdown', () => {
  it('continues a running execution after a crash from its last committed step, re-running the interrupted one', async () => {
    const first = makeEngine([gated]);
    const run = await startExecution(first, 'gated', { key: 'crash-1' });
    await until(async () => typesOf(await recordsOf(first, run.executionId)).length === 4); // started, first ×2, wait started
    // the process dies here: a new engine on the same log recovers; the old one never runs again
    const second = makeEngine([gated], { log: first.log });
    const settled = second.fanout.waitForSettle(executionStream(run.executionId), 0);
    expect(await second.recover([run.executionId])).toBe(1);
    await until(async () => (await recordsOf(second, run.executionId)).some((r) => r.type === 'step.started' && (r.data as { attempt: number }).attempt === 3));
    release('crash-1');
    const rec = await settled;
    expect(rec.type).toBe('execution.completed');
    const records = await recordsOf(second, run.executionId);
    expect(typesOf(records)).toEqual([
      'execution.started',
      'step.started',
      'step.completed',
      'step.started',
      'execution.recovered',
      'step.started',
      'step.completed',
      'step.started',
      'step.completed',
      'execution.completed',
    ]);
    const view = foldExecution(records);
    expect(view.metadata.recoveredAt).toEqual(expect.any(String));
    expect(view.events.find((e) => e.sequence === 5)).toMatchObject({ type: 'workflow-start', metadata: { recovered: true, resumeStepIndex: 1 } });
  });

  it('turns a running execution whose workflow is no longer registered into an error, logged once at error', async () => {
    const first = makeEngine([gated]);
    const run = await startExecution(first, 'gated', { key: 'gone' });
    await until(async () => (await recordsOf(first, run.executionId)).length === 4);
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const second = makeEngine([], { log: first.log, logger });
    const settled = second.fanout.waitForSettle(executionStream(run.executionId), 0);
    await second.recover([run.executionId]);
    const rec = await settled;
    expect(rec.type).toBe('execution.failed');
    expect((rec.data as { error: { message: string } }).error.message).toBe('Workflow gated is no longer registered');
    expect(lines).toEqual([expect.objectContaining({ level: 50, workflowId: 'gated', executionId: run.executionId, msg: 'Workflow gated is no longer registered' })]);
  });

  it('waits for the step in flight on stop, records its outcome and starts nothing after it', async () => {
    const engine = makeEngine([gated]);
    const run = await startExecution(engine, 'gated', { key: 'stop-1' });
    await until(async () => (await recordsOf(engine, run.executionId)).length === 4);
    const stopped = engine.stop();
    release('stop-1');
    await stopped;
    // a step started after stop would be started by the settled outcome's continuation: let it run
    await new Promise((r) => setImmediate(r));
    expect(typesOf(await recordsOf(engine, run.executionId))).toEqual(['execution.started', 'step.started', 'step.completed', 'step.started', 'step.completed']);
  });
});

describe('definitions', () => {
  it('refuses a workflow registered twice and a missing step builder', () => {
    const w = createWorkflow({ id: 'dup' }, andThen({ id: 'a', execute: () => 1 }));
    expect(() => makeEngine([w, w])).toThrow("Workflow id 'dup' is registered twice");
    expect(() => createWorkflow({ id: 'x' }, andThen({ id: 'a', execute: () => 1 }), andThen({ id: 'a', execute: () => 2 }))).toThrow("step id 'a' is used twice");
    expect(() => createWorkflow({ id: 'x', input: z.string() })).toThrow('needs at least one step');
  });
});

describe('cancelling a parent', () => {
  it('cancels the suspended child of a parent cancelled while suspended in its sub-workflow', async () => {
    const { cancelExecution } = await import('../../src/workflows/commands.js');
    const engine = makeEngine([parent]);
    const run = await startExecution(engine, 'parent', { v: 1 });
    expect((await run.settled).type).toBe('execution.suspended');
    await cancelExecution(engine, 'parent', run.executionId, 'no longer needed');
    await until(async () => typesOf(await engine.log.readStream(executionStream(`${run.executionId}/sub`))).at(-1) === 'execution.cancelled');
    const child = await engine.log.readStream(executionStream(`${run.executionId}/sub`));
    expect(child.at(-1)!.data).toMatchObject({ reason: 'no longer needed' });
  });
});
