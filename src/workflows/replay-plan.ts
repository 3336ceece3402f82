/**
 * Plans a replay (decisions.md §9.6) from the source execution's records: which recorded step
 * outputs are restored, the start step's input and the workflowState it starts with. Pure; every
 * refusal is a 400 with the message of decisions.md §14.
 */
import { badRequest } from '../errors.js';
import type { LogRecord } from '../log/types.js';
import type { ExecutionContext, ReplaySeed, StepState } from '../../machines/workflow-execution.machine.js';
import type { WorkflowDefinition } from './types.js';

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
export function workflowStateAtStart(records: readonly LogRecord[], stepId: string): Record<string, unknown> | undefined {
  let state = ((records[0]?.data as { workflowState?: Record<string, unknown> })?.workflowState ?? {}) as Record<string, unknown>;
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

export function planReplay(
  def: WorkflowDefinition,
  source: { context: ExecutionContext; records: readonly LogRecord[] },
  req: ReplayRequest,
  replayedAt: number,
): ReplayPlan {
  const index = def.steps.findIndex((s) => s.id === req.stepId);
  if (index < 0) throw badRequest(`Step '${req.stepId}' not found in workflow '${def.id}'`);
  const recorded = source.context.steps;
  const steps: Record<string, StepState> = {};
  const missing: string[] = [];
  for (let j = 0; j < index; j++) {
    const id = def.steps[j].id;
    const st = recorded[id];
    if (!st || (st.status !== 'success' && st.status !== 'skipped')) missing.push(id);
    else steps[id] = { index: j, input: st.input, ...(st.status === 'success' ? { output: st.output } : {}), status: st.status };
  }
  if (missing.length > 0) throw badRequest(`Cannot replay from step '${req.stepId}': missing recorded output of step(s) ${missing.join(', ')}`);

  let data: unknown;
  let hasData = false;
  if (req.inputData !== undefined) [data, hasData] = [req.inputData, true];
  else if (recorded[req.stepId] && 'input' in recorded[req.stepId]) [data, hasData] = [recorded[req.stepId].input, true];
  else if (index > 0) {
    const prev = steps[def.steps[index - 1].id];
    [data, hasData] = [prev.status === 'success' ? prev.output : prev.input, true];
  } else [data, hasData] = [source.context.input, source.context.input !== undefined];
  if (!hasData) throw badRequest(`Cannot replay from step '${req.stepId}': missing input data (provide inputData)`);

  const workflowState = req.workflowStateOverride ?? workflowStateAtStart(source.records, req.stepId) ?? source.context.workflowState ?? {};
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
