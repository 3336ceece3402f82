/**
 * Replay equivalence: for random deterministic workflows, an execution replayed from step k with
 * no overrides produces the same step outputs (steps ≥ k), result and workflowState as its source.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { andThen, andWhen, createWorkflow } from '../../src/workflows/builder.js';
import { replayExecution, startExecution } from '../../src/workflows/commands.js';
import { foldExecution } from '../../src/workflows/executions-view.js';
import type { WorkflowStep } from '../../src/workflows/types.js';
import { makeEngine, recordsOf } from './helpers.js';

type Data = { v: number; trail: number[] };
const stepSpec = fc.record({ a: fc.integer({ min: -3, max: 3 }), b: fc.integer({ min: -10, max: 10 }), conditional: fc.boolean(), writesState: fc.boolean() });

function buildWorkflow(specs: Array<{ a: number; b: number; conditional: boolean; writesState: boolean }>) {
  const steps: WorkflowStep[] = specs.map((s, i) => {
    const then = andThen({
      id: `s${i}`,
      execute: ({ data, workflowState, setWorkflowState }) => {
        const d = data as Data;
        const v = d.v * s.a + s.b;
        if (s.writesState) setWorkflowState({ ...workflowState, sum: ((workflowState.sum as number) ?? 0) + v, [`s${i}`]: v });
        return { v, trail: [...d.trail, i] };
      },
    });
    return s.conditional ? andWhen({ id: `s${i}`, condition: ({ data }) => (data as Data).v % 2 === 0, step: { ...then, id: `inner${i}` } }) : then;
  });
  return createWorkflow({ id: 'det' }, ...steps);
}

const outputs = (records: Awaited<ReturnType<typeof recordsOf>>) =>
  Object.fromEntries(
    foldExecution(records)
      .events.filter((e) => e.type === 'step-complete')
      .map((e) => [e.from, { status: e.status, output: e.output }]),
  );

describe('replay', () => {
  it('reproduces the source from step k on for deterministic steps', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepSpec, { minLength: 1, maxLength: 6 }), fc.integer({ min: -20, max: 20 }), fc.nat(), async (specs, v0, pick) => {
        const engine = makeEngine([buildWorkflow(specs)]);
        const src = await startExecution(engine, 'det', { v: v0, trail: [] }, { workflowState: { seed: v0 } });
        const srcRec = await src.settled;
        expect(srcRec.type).toBe('execution.completed');
        const k = pick % specs.length;
        const rep = await replayExecution(engine, 'det', src.executionId, { stepId: `s${k}` });
        const repRec = await rep.settled;
        expect(repRec.type).toBe('execution.completed');
        expect((repRec.data as { result: unknown }).result).toEqual((srcRec.data as { result: unknown }).result);
        const srcRecords = await recordsOf(engine, src.executionId);
        const repRecords = await recordsOf(engine, rep.executionId);
        const so = outputs(srcRecords);
        const ro = outputs(repRecords);
        for (let i = k; i < specs.length; i++) expect(ro[`s${i}`]).toEqual(so[`s${i}`]);
        for (let i = 0; i < k; i++) expect(ro[`s${i}`]).toBeUndefined(); // not re-run
        expect(foldExecution(repRecords).workflowState).toEqual(foldExecution(srcRecords).workflowState);
      }),
      { numRuns: 60 },
    );
  });

  it('replays from a nested step exactly as from the top-level step holding it, and refuses one that did not run', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepSpec, { minLength: 1, maxLength: 6 }), fc.integer({ min: -20, max: 20 }), fc.nat(), async (specs, v0, pick) => {
        const conditional = specs.map((s, i) => (s.conditional ? i : -1)).filter((i) => i >= 0);
        fc.pre(conditional.length > 0);
        const k = conditional[pick % conditional.length];
        const engine = makeEngine([buildWorkflow(specs)]);
        const src = await startExecution(engine, 'det', { v: v0, trail: [] }, { workflowState: { seed: v0 } });
        await src.settled;
        const branchRan = foldExecution(await recordsOf(engine, src.executionId)).events.some((e) => e.type === 'step-complete' && e.from === `s${k}` && e.status === 'success');
        if (!branchRan) {
          await expect(replayExecution(engine, 'det', src.executionId, { stepId: `inner${k}` })).rejects.toThrow(
            `Cannot replay from step 'inner${k}': it did not run in this execution (its branch 's${k}' was skipped)`,
          );
          return;
        }
        const nested = await replayExecution(engine, 'det', src.executionId, { stepId: `inner${k}` });
        const top = await replayExecution(engine, 'det', src.executionId, { stepId: `s${k}` });
        const [n, t] = [await nested.settled, await top.settled];
        expect(n.data).toEqual(t.data);
        const [nr, tr] = [await recordsOf(engine, nested.executionId), await recordsOf(engine, top.executionId)];
        expect(outputs(nr)).toEqual(outputs(tr));
        expect(foldExecution(nr).workflowState).toEqual(foldExecution(tr).workflowState);
        expect(foldExecution(nr).replayFromStepId).toBe(`inner${k}`);
      }),
      { numRuns: 60 },
    );
  });
});
