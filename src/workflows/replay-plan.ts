/**
 * Plans a replay (docs/api-reference.md "Replay") from the source execution's records: which recorded step
 * outputs are restored, the start step's input and the workflowState it starts with. The start is
 * the replay point of `stepId` (replay-point.ts: a nested step replays from the top-level step that
 * contains it). Pure; every refusal is a 400 with the message of docs/api-reference.md "Errors", plus
 * `replayableSteps` (the steps this source can be replayed from) in the error body.
 */
import { badRequest } from '../errors.js';
import type { LogRecord } from '../log/types.js';
import type { ExecutionContext, ReplaySeed, StepState } from '../../machines/workflow-execution.machine.js';
import type { WorkflowDefinition } from './types.js';
import { replayableSteps, replayPointProblem, resolveReplayPoint, type StepLocation } from './replay-point.js';

export interface ReplayRequest {
  stepId: string;
  inputData?: unknown;
  resumeData?: unknown;
  workflowStateOverride?: Record<string, unknown>;
}

export interface ReplayPlan {
  seed: ReplaySeed;
  workflowState: Record<string, unknown>;
}

/** The source's workflowState when the step `stepId` last started (undefined if it never did). */
function workflowStateAtStart(records: readonly LogRecord[], stepId: string): Record<string, unknown> | undefined {
  let state = (records[0]?.data as { workflowState?: Record<string, unknown> })?.workflowState ?? {};
  let suspendedState: Record<string, unknown> | undefined;
  let found: Record<string, unknown> | undefined;
  for (const r of records) {
    const d = r.data as Record<string, any>;
    if (r.type === 'step.completed' && d.workflowState) state = d.workflowState;
    else if (r.type === 'execution.suspended') {
      if (d.workflowState) state = d.workflowState;
      suspendedState = state;
    } else if (r.type === 'execution.resumed' && suspendedState) state = suspendedState;
    else if (r.type === 'step.started' && d.stepId === stepId) found = state;
  }
  return found;
}

/**
 * The replay point of `stepId` in a source with these recorded steps, or the 400 saying why not
 * (unknown and ambiguous ids, steps that did not run, missing outputs) with the replayable steps.
 */
export function replayPointOf(def: WorkflowDefinition, recorded: ExecutionContext['steps'], stepId: string): StepLocation {
  const refuse = (message: string) => badRequest(message, { replayableSteps: replayableSteps(def, recorded) });
  const r = resolveReplayPoint(def, stepId);
  if (!r.ok && r.reason === 'unknown') throw refuse(`Step '${stepId}' not found in workflow '${def.id}'`);
  if (!r.ok) {
    const paths = r.candidates.map((l) => `'${l.path.join('/')}'`).join(', ');
    throw refuse(`Cannot replay from step '${stepId}': the id is used at more than one place (${paths}); name the step by its path`);
  }
  const problem = replayPointProblem(def, recorded, r.point);
  if (problem === undefined) return r.point;
  // the missing-output message is the contract's (docs/api-reference.md "Errors"): the list travels in the body only
  if (problem.kind === 'missing-outputs') throw refuse(`Cannot replay from step '${stepId}': missing recorded output of step(s) ${problem.stepIds.join(', ')}`);
  const list = replayableSteps(def, recorded).join(', ') || 'none';
  throw refuse(`Cannot replay from step '${stepId}': it did not run in this execution (its branch '${problem.skippedBranch}' was skipped); replayable steps: ${list}`);
}

export function planReplay(def: WorkflowDefinition, source: { context: ExecutionContext; records: readonly LogRecord[] }, req: ReplayRequest, replayedAt: number): ReplayPlan {
  const recorded = source.context.steps;
  const point = replayPointOf(def, recorded, req.stepId);
  const index = point.topIndex;
  const topId = point.topStepId;
  const steps: Record<string, StepState> = {};
  for (let j = 0; j < index; j++) {
    const st = recorded[def.steps[j].id];
    steps[def.steps[j].id] = { index: j, input: st.input, ...(st.status === 'success' ? { output: st.output } : {}), status: st.status };
  }

  let data: unknown;
  let hasData = false;
  if (req.inputData !== undefined) [data, hasData] = [req.inputData, true];
  else if (recorded[topId] && 'input' in recorded[topId]) [data, hasData] = [recorded[topId].input, true];
  else if (index > 0) {
    const prev = steps[def.steps[index - 1].id];
    [data, hasData] = [prev.status === 'success' ? prev.output : prev.input, true];
  } else [data, hasData] = [source.context.input, source.context.input !== undefined];
  if (!hasData) throw badRequest(`Cannot replay from step '${req.stepId}': missing input data (provide inputData)`, { replayableSteps: replayableSteps(def, recorded) });

  const workflowState = req.workflowStateOverride ?? workflowStateAtStart(source.records, topId) ?? source.context.workflowState ?? {};
  return {
    workflowState,
    seed: {
      fromExecutionId: source.context.executionId,
      fromStepId: req.stepId,
      startIndex: index,
      data,
      steps,
      ...(req.resumeData !== undefined ? { resumeData: req.resumeData, hasResumeData: true } : {}),
      replayedAt,
    },
  };
}
