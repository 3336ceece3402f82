/**
 * Replay equivalence: for random deterministic workflows, an execution replayed from step k with
 * no overrides produces the same step outputs (steps ≥ k), result and workflowState as its source.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { andThen, andWhen, createWorkflow } from '../../src/workflows/builder.js';
import { replayExecution, startExecution } from '../../src/workflows/commands.js';
import { foldExecution } from '../../src/projections/executions-view.js';
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
  Object.fromEntries(foldExecution(records).events.filter((e) => e.type === 'step-complete').map((e) => [e.from, { status: e.status, output: e.output }]));

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
});
