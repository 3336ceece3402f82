/**
 * `testWorkflow` on a workflow with an agent step (lookup → andAgent → approval), the shape a new
 * user writes first: agent steps run by default (a demo-model stand-in per agent id, or the agents
 * given), the coverage of each property is reported, and a property that exercised nothing (every
 * execution stopped at its first step, or a step no run reached) fails with the reason instead of
 * passing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { WorkflowNotExercised, formatCoverage, testWorkflow, type WorkflowCoverage } from '../../src/testing/index.js';
import { andAgent, andThen, createWorkflow } from '../../src/workflows/builder.js';
import { createAgent } from '../../src/agents/define-agent.js';

const orders = createWorkflow(
  { id: 'orders', input: z.object({ orderId: z.string().min(1) }), resumeSchema: z.object({ approved: z.boolean() }) },
  andThen({ id: 'lookup', execute: ({ data }) => ({ orderId: (data as { orderId: string }).orderId, total: 120 }) }),
  andAgent({ id: 'draft', agent: 'assistant', prompt: (d: { orderId: string }) => `Draft a note for order ${d.orderId}`, schema: z.object({ note: z.string() }) }),
  andThen({
    id: 'approval',
    execute: ({ resumeData, suspend, getStepResult }) => {
      if (resumeData === undefined) suspend('manager approval');
      return { approved: (resumeData as { approved: boolean }).approved, note: getStepResult<{ note: string }>('draft')!.note };
    },
  }),
);

afterEach(() => vi.restoreAllMocks());

describe('testWorkflow with agent steps', () => {
  it('runs andAgent steps with a demo-model stand-in by default, so the steps after them are exercised', async () => {
    let reported: WorkflowCoverage | undefined;
    const coverage = await testWorkflow(orders, { numRuns: 25, seed: 3, onCoverage: (c) => (reported = c) });
    expect(reported).toEqual(coverage);
    expect(coverage.runs).toBe(25);
    const byStep = Object.fromEntries(coverage.steps.map((s) => [s.stepId, s]));
    expect(byStep.draft.passed).toBeGreaterThan(0);
    expect(byStep.approval.runs).toBeGreaterThan(0);
    expect(coverage.statuses.completed).toBeGreaterThan(0);
    expect(coverage.errors).toEqual([]);
  }, 60_000);

  it('runs them with the agents given, and reports an agent id they do not cover before any run', async () => {
    const misspelt = createAgent({ id: 'asistant', name: 'Assistant', instructions: 'x' });
    await expect(testWorkflow(orders, { numRuns: 5, agents: [misspelt], onCoverage: false })).rejects.toThrow(
      "Workflow 'orders' step 'draft': agent 'assistant' is not configured; did you mean 'asistant'? (agents: 'asistant')",
    );
    const given = createAgent({ id: 'assistant', name: 'Assistant', instructions: 'Write short notes.', model: 'demo' });
    const coverage = await testWorkflow(orders, { numRuns: 10, seed: 5, agents: [given], onCoverage: false });
    expect(coverage.steps.find((s) => s.stepId === 'draft')!.passed).toBeGreaterThan(0);
  }, 60_000);

  it('fails with the reason when no execution gets past the first step', async () => {
    const agentFirst = createWorkflow({ id: 'agent-first' }, andAgent({ id: 'draft', agent: 'assistant', prompt: () => 'hi' }), andThen({ id: 'after', execute: ({ data }) => data }));
    const broken = { run: async () => Promise.reject(new Error('provider is down')) };
    const failure = await testWorkflow(agentFirst, { numRuns: 10, seed: 1, agentRunner: broken, onCoverage: false }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowNotExercised);
    const message = (failure as Error).message;
    expect(message).toMatch(
      /^workflow 'agent-first' was not exercised: in 10 run\(s\) no execution got past its first step 'draft'; the executions in error failed with: \d+ × at 'draft': provider is down\n/,
    );
    expect((failure as WorkflowNotExercised).coverage.statuses.completed).toBe(0);
  }, 60_000);

  it('fails when a later step is never reached, unless mayNotReach names it', async () => {
    const stuck = createWorkflow(
      { id: 'stuck' },
      andThen({ id: 'lookup', execute: () => ({ total: 1 }) }),
      andThen({
        id: 'charge',
        execute: () => {
          throw new Error('card declined');
        },
      }),
      andThen({ id: 'ship', execute: ({ data }) => data }),
    );
    await expect(testWorkflow(stuck, { numRuns: 8, seed: 2, onCoverage: false, without: ['crash'] })).rejects.toThrow(
      /^workflow 'stuck' was not fully exercised: in 8 run\(s\) no execution reached step 'ship' \(list a step that may stay unreached in mayNotReach\); the executions in error failed with: \d+ × at 'charge': card declined/,
    );
    const coverage = await testWorkflow(stuck, { numRuns: 8, seed: 2, onCoverage: false, without: ['crash'], mayNotReach: ['ship'] });
    expect(coverage.steps.map((s) => [s.stepId, s.runs > 0])).toEqual([
      ['lookup', true],
      ['charge', true],
      ['ship', false],
    ]);
  }, 60_000);

  it('prints the coverage by default: runs reaching each step, how executions ended, why they failed', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const coverage = await testWorkflow(orders, { numRuns: 10, seed: 9 });
    expect(log).toHaveBeenCalledTimes(1);
    const printed = String(log.mock.calls[0][0]);
    expect(printed).toBe(formatCoverage(coverage));
    const lines = printed.split('\n');
    expect(lines[0]).toBe(`testWorkflow 'orders': 10 run(s), ${coverage.executions} execution(s)`);
    expect(lines[1]).toMatch(/^ {2}step +runs reaching it +executions +passed$/);
    for (const [i, s] of coverage.steps.entries()) expect(lines[2 + i]).toMatch(new RegExp(`^  ${s.stepId} +${s.runs} +${s.executions} +${s.passed}$`));
    expect(lines[5]).toMatch(/^ {2}ended: (completed|suspended|cancelled|error|running) \d+/);
  }, 60_000);
});
