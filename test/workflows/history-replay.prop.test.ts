/**
 * Offline replay (history-replay.ts) against the code that recorded the history: whatever commands
 * a run went through (suspend, resume, cancel, crash and recovery, replay from a step), the replay
 * reports it identical, fed or live; and one change to the definition is reported at the step where
 * the recording first meets it.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { runCommands, workflowCommands } from '../../src/testing/index.js';
import { collectDefinitions, replayExecutionHistory } from '../../src/workflows/history-replay.js';
import { orderApprovalWorkflow } from '../../examples/workflows/index.js';
import { branching, child, parent, twoApprovals } from './fixtures.js';
import { orderFlow } from '../fixtures/replay/order-flow.js';

describe('replaying recorded histories', () => {
  it('reports every history identical against the code that recorded it, fed and live (order-approval, a sub-workflow, branches, repeated suspensions)', async () => {
    for (const workflow of [orderApprovalWorkflow, parent, branching, twoApprovals]) {
      const definitions = collectDefinitions([workflow]);
      await fc.assert(
        fc.asyncProperty(workflowCommands(workflow, { maxCommands: 10 }), async (commands) => {
          const history = await runCommands(workflow, commands);
          for (const e of history.executions) {
            for (const live of [false, true]) {
              const report = await replayExecutionHistory(e.records, { definitions, live });
              expect(report.divergence, `${workflow.id}: ${commands.join(', ')} → ${e.records.map((r) => r.type).join(',')}`).toBeUndefined();
              expect(report).toMatchObject({ result: 'identical', recordedStatus: e.status });
            }
          }
        }),
        { numRuns: 50, seed: 5 },
      );
    }
  }, 120_000);

  it('replays a parent and its sub-workflow execution, each against its own definition', async () => {
    const definitions = collectDefinitions([parent]);
    expect([...definitions.keys()]).toEqual(['parent', 'child']);
    const { execute, settle, resume } = await import('../../src/testing/index.js');
    const history = await runCommands(parent, [execute({ v: 1 }), settle(), resume({ add: 5 }), settle()], { workflows: [child] });
    expect(history.executions.map((e) => [e.workflowId, e.status])).toEqual([
      ['parent', 'completed'],
      ['child', 'completed'],
    ]);
    for (const e of history.executions) expect((await replayExecutionHistory(e.records, { definitions })).result).toBe('identical');
  });

  it('names the first step where a changed definition departs from the recording', async () => {
    const { execute, settle, resume } = await import('../../src/testing/index.js');
    const history = await runCommands(orderFlow(), [execute({ items: [150] }), settle(), resume({ approved: true }), settle()]);
    const records = history.executions[0].records;
    const replay = (variant: Parameters<typeof orderFlow>[0]) => replayExecutionHistory(records, { definitions: collectDefinitions([orderFlow(variant)]) });
    expect((await replay({})).result).toBe('identical');
    expect((await replay({ totalId: 'sum' })).divergence).toMatchObject({ kind: 'step-renamed', stepId: 'compute-total', stepIndex: 0, expected: 'compute-total', actual: 'sum' });
    expect((await replay({ insertValidate: true })).divergence).toMatchObject({ kind: 'step-new', stepId: 'validate-order', stepIndex: 1 });
    expect((await replay({ threshold: 1000 })).divergence).toMatchObject({ kind: 'branch', stepId: 'approval-gate', expected: 'suspended', actual: 'skipped' });
    // a step removed at the end: the recording runs it, the current code completes before it
    const shorter = collectDefinitions([{ ...orderFlow(), steps: orderFlow().steps.slice(0, 2) }]);
    expect((await replayExecutionHistory(records, { definitions: shorter })).divergence).toMatchObject({ kind: 'step-gone', stepId: 'finalise', stepIndex: 2 });
    // live: every step that returns another value is listed, and the walk goes on past each
    const live = await replayExecutionHistory(records, { definitions: collectDefinitions([orderFlow({ totalOffset: 1, approvedStatus: 'accepted' })]), live: true });
    expect(live.result).toBe('diverged');
    expect(live.valueDifferences!.map((d) => [d.kind, d.stepId, d.differences])).toEqual([
      ['output', 'compute-total', ['$.total: 150 → 151']],
      ['output', 'finalise', ['$.status: "approved" → "accepted"']],
    ]);
    expect(live.divergence).toBe(live.valueDifferences![0]);
    // fed, the same change is invisible: outputs come from the recording
    expect((await replayExecutionHistory(records, { definitions: collectDefinitions([orderFlow({ totalOffset: 1, approvedStatus: 'accepted' })]) })).result).toBe('identical');
    // a replay run restores the steps before its start: a step new among them is reported too
    const { replayFrom } = await import('../../src/testing/index.js');
    const replays = await runCommands(orderFlow(), [execute({ items: [1] }), settle(), replayFrom('finalise'), settle()]);
    const replayRun = replays.executions.find((e) => e.replayOf)!;
    expect((await replayExecutionHistory(replayRun.records, { definitions: collectDefinitions([orderFlow()]) })).result).toBe('identical');
    expect((await replayExecutionHistory(replayRun.records, { definitions: collectDefinitions([orderFlow({ insertValidate: true })]) })).divergence).toMatchObject({
      kind: 'step-new',
      stepId: 'validate-order',
      stepIndex: 1,
      streamSeq: 1,
    });
    // the workflow no longer in the config
    expect((await replayExecutionHistory(records, { definitions: new Map() })).divergence).toMatchObject({ kind: 'workflow-missing' });
  });
});
