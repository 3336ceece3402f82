/**
 * The two records an execution gets from outside its steps, built in one place each: the
 * `execution.started` data of a new execution (a fresh one, a replay, a sub-workflow) and the
 * `execution.suspended` event of an external suspend (the suspend command, a suspended parent).
 */
import { suspendableStepIndex, type ExecutionContext, type ExecutionEvent, type ExecutionInput } from '../../machines/workflow-execution.machine.js';
import type { WorkflowDefinition } from './types.js';

export type NewExecutionFields = Omit<ExecutionInput, 'executionId' | 'workflowId' | 'workflowName' | 'stepIds' | 'context' | 'workflowState' | 'metadata'> &
  Partial<Pick<ExecutionInput, 'context' | 'workflowState' | 'metadata'>>;

/** The `execution.started` data of a new execution of `def`; absent optional fields stay absent. */
export function newExecutionInput(def: WorkflowDefinition, executionId: string, fields: NewExecutionFields): ExecutionInput {
  const input: ExecutionInput = {
    executionId,
    workflowId: def.id,
    workflowName: def.name,
    stepIds: def.steps.map((s) => s.id),
    input: fields.input,
    context: fields.context ?? {},
    workflowState: fields.workflowState ?? {},
    metadata: fields.metadata ?? {},
    createdAt: fields.createdAt,
  };
  for (const key of ['userId', 'conversationId', 'parentExecutionId', 'parentStepId', 'replay', 'traceId', 'idempotency'] as const) {
    if (fields[key] !== undefined) (input as unknown as Record<string, unknown>)[key] = fields[key];
  }
  return input;
}

/**
 * The event that suspends a running execution from outside, at the step in flight (or the next
 * one); undefined when every step is done and only the completion is left.
 */
export function externalSuspendEvent(c: ExecutionContext, def: WorkflowDefinition | undefined, reason: string): ExecutionEvent | undefined {
  const idx = suspendableStepIndex(c);
  if (idx === undefined) return undefined;
  const step = def?.steps[idx];
  return {
    type: 'execution.suspended',
    stepIndex: idx,
    stepId: c.stepIds[idx],
    stepName: step?.name ?? c.stepIds[idx],
    stepType: step?.type ?? 'andThen',
    input: c.current ? c.current.input : c.data,
    reason,
    workflowName: c.workflowName,
  };
}
