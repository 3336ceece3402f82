/**
 * The engine's pure decisions, shared by the live engine (engine.ts) and the offline history
 * replayer (history-replay.ts) so both decide the same way: which event the workflow code produces
 * next for a running execution, which event a step's outcome becomes, and the environment a
 * top-level step runs in.
 */
import type { ExecutionContext, ExecutionEvent } from '../../machines/workflow-execution.machine.js';
import type { WorkflowDefinition, WorkflowStep } from './types.js';
import type { StepOutcome, StepRunEnv } from './step-runner.js';

/**
 * The event the workflow code decides next for a running execution with no step in flight: start
 * the next step, complete the run, or fail it when the definition no longer matches the recording.
 */
export function nextStepEvent(def: WorkflowDefinition | undefined, c: ExecutionContext): ExecutionEvent {
  if (!def) return { type: 'execution.failed', error: { message: `Workflow ${c.workflowId} is no longer registered`, name: 'Error' }, workflowName: c.workflowName };
  if (c.nextIndex >= c.stepIds.length) return { type: 'execution.completed', result: c.data ?? null, workflowName: c.workflowName };
  const step = def.steps[c.nextIndex];
  if (!step || step.id !== c.stepIds[c.nextIndex]) {
    return { type: 'execution.failed', error: { message: `Workflow ${c.workflowId} changed since execution ${c.executionId} started (step ${c.nextIndex} is no longer '${c.stepIds[c.nextIndex]}')`, name: 'Error' }, workflowName: c.workflowName };
  }
  return { type: 'step.started', stepIndex: c.nextIndex, stepId: step.id, stepName: step.name ?? step.id, stepType: step.type, input: c.data, attempt: c.attempts + 1 };
}

/** The event a top-level step's outcome becomes. */
export function outcomeEvent(workflowName: string, step: WorkflowStep, cur: { index: number; attempt: number; input: unknown }, o: StepOutcome): ExecutionEvent {
  const base = { stepIndex: cur.index, stepId: step.id, stepName: step.name ?? step.id, stepType: step.type, input: cur.input, attempt: cur.attempt };
  switch (o.kind) {
    case 'completed':
      return { type: 'step.completed', ...base, output: o.output ?? null, ...(o.workflowState ? { workflowState: o.workflowState } : {}), ...(o.usage ? { usage: o.usage } : {}) };
    case 'skipped':
      return { type: 'step.skipped', ...base };
    case 'suspended':
      return {
        type: 'execution.suspended',
        ...base,
        reason: o.reason,
        ...(o.suspendData !== undefined ? { suspendData: o.suspendData } : {}),
        ...(o.workflowState ? { workflowState: o.workflowState } : {}),
        workflowName,
      };
    case 'failed':
      return { type: 'execution.failed', error: o.error, attempt: cur.attempt, workflowName };
  }
}

/** What a step environment needs from its host besides the execution's state. */
export type StepEnvHooks = Pick<StepRunEnv, 'signal' | 'logger' | 'emit' | 'agentRunner' | 'runChild'>;

/** The environment of the top-level step in flight (`c.current`), as the engine runs it. */
export function stepEnv(def: WorkflowDefinition, c: ExecutionContext, hooks: StepEnvHooks): StepRunEnv {
  const cur = c.current!;
  const isResume = c.resume !== null && c.resume.stepIndex === cur.index;
  return {
    executionId: c.executionId,
    workflowId: c.workflowId,
    data: cur.input,
    resumeData: isResume ? c.resume!.resumeData : undefined,
    isResume,
    initData: c.input,
    stepResults: c.steps,
    workflowState: c.workflowState,
    context: c.context,
    userId: c.userId,
    conversationId: c.conversationId,
    retries: def.retries,
    signal: hooks.signal,
    // read through: the engine's logger is created on first use (most steps never log)
    get logger() {
      return hooks.logger;
    },
    emit: hooks.emit,
    agentRunner: hooks.agentRunner,
    runChild: hooks.runChild,
  };
}
