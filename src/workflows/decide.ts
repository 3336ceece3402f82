/**
 * The engine's pure decisions, shared by the live engine (engine.ts) and the offline history
 * replayer (history-replay.ts) so both decide the same way: which event the workflow code produces
 * next for a running execution, which event a step's outcome becomes, and the environment a
 * top-level step runs in.
 */
import type { Logger } from 'pino';
import type { ExecutionContext, ExecutionEvent } from '../../machines/workflow-execution.machine.js';
import type { WorkflowDefinition, WorkflowStep } from './types.js';
import { checkDeclared, type StepOutcome, type StepRunEnv } from './step-runner.js';
import { executionStream } from './events.js';
import { traceIdFor } from '../kernel/span-types.js';

/** The trace of an execution's spans (recorded at its start; derived for executions started before it was). */
export const traceOf = (c: { traceId?: string; executionId: string }) => c.traceId ?? traceIdFor(executionStream(c.executionId));

/** The end of a run whose steps are all done: completed, unless the final data fails the declared `result` schema. */
function completionEvent(def: WorkflowDefinition, data: unknown, workflowName: string): ExecutionEvent {
  if (!def.result) return { type: 'execution.completed', result: data ?? null, workflowName };
  const r = checkDeclared(def.result, data);
  if (r.ok) return { type: 'execution.completed', result: r.value ?? null, workflowName };
  return { type: 'execution.failed', error: { message: `Workflow result does not match its result schema: ${r.issues}`, name: 'ValidationError' }, workflowName };
}

/**
 * A run failed by a decision rather than by a step: `engine` when the engine cannot go on with it
 * (the server's failure), `result` when the final data fails the workflow's result schema (the
 * workflow code's failure, which no step reported). One argument, so a caller that hands it on
 * whole passes the cause along.
 */
export interface RunFailure {
  message: string;
  cause: 'engine' | 'result';
}

/**
 * The event the workflow code decides next for a running execution with no step in flight: start
 * the next step, complete the run, or fail it when the definition no longer matches the recording.
 * `onFailure` hears a run failed here rather than by a step (see RunFailure).
 */
export function nextStepEvent(def: WorkflowDefinition | undefined, c: ExecutionContext, onFailure?: (failure: RunFailure) => void): ExecutionEvent {
  const engineFailure = (message: string): ExecutionEvent => {
    onFailure?.({ message, cause: 'engine' });
    return { type: 'execution.failed', error: { message, name: 'Error' }, workflowName: c.workflowName };
  };
  if (!def) return engineFailure(`Workflow ${c.workflowId} is no longer registered`);
  if (c.nextIndex >= c.stepIds.length) {
    const end = completionEvent(def, c.data, c.workflowName);
    if (end.type === 'execution.failed') onFailure?.({ message: end.error.message, cause: 'result' });
    return end;
  }
  const step = def.steps[c.nextIndex];
  if (!step || step.id !== c.stepIds[c.nextIndex]) {
    return engineFailure(`Workflow ${c.workflowId} changed since execution ${c.executionId} started (step ${c.nextIndex} is no longer '${c.stepIds[c.nextIndex]}')`);
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
export interface StepEnvHooks {
  signal: AbortSignal;
  /** read when the step first logs (the engine creates it lazily) */
  logger(): Logger;
  emit: StepRunEnv['emit'];
  agentRunner: StepRunEnv['agentRunner'];
  runChild: StepRunEnv['runChild'];
  /** durable waits (the live engine's); a host without them fails a waiting step */
  wait?: StepRunEnv['wait'];
  now?: StepRunEnv['now'];
}

/**
 * The environment of the top-level step in flight (`c.current`), as the engine runs it. A class
 * rather than an object literal: a literal with an accessor (the lazy `logger`) is built on V8's
 * slow path (~1 µs, and a dictionary-mode object whose every field read is slower), once per step.
 */
class StepEnv implements StepRunEnv {
  readonly executionId: string;
  readonly workflowId: string;
  readonly traceId: string;
  readonly data: unknown;
  readonly resumeData: unknown;
  readonly suspendData: unknown;
  readonly isResume: boolean;
  readonly initData: unknown;
  readonly stepResults: ExecutionContext['steps'];
  readonly stepIds: readonly string[];
  readonly workflowState: Record<string, unknown>;
  readonly context: Record<string, unknown>;
  readonly userId: string | undefined;
  readonly conversationId: string | undefined;
  readonly signal: AbortSignal;
  readonly retries: number;
  readonly emit: StepRunEnv['emit'];
  readonly agentRunner: StepRunEnv['agentRunner'];
  readonly runChild: StepRunEnv['runChild'];
  readonly waits: ExecutionContext['waits'];
  readonly now: StepRunEnv['now'];
  readonly wait: StepRunEnv['wait'];

  constructor(
    def: WorkflowDefinition,
    c: ExecutionContext,
    private readonly hooks: StepEnvHooks,
  ) {
    const cur = c.current!;
    const isResume = c.resume !== null && c.resume.stepIndex === cur.index;
    this.executionId = c.executionId;
    this.workflowId = c.workflowId;
    this.traceId = traceOf(c);
    this.data = cur.input;
    this.resumeData = isResume ? c.resume!.resumeData : undefined;
    this.suspendData = isResume ? c.resume!.suspendData : undefined;
    this.isResume = isResume;
    this.initData = c.input;
    this.stepResults = c.steps;
    this.stepIds = c.stepIds;
    this.workflowState = c.workflowState;
    this.context = c.context;
    this.userId = c.userId;
    this.conversationId = c.conversationId;
    this.signal = hooks.signal;
    this.retries = def.retries;
    this.emit = hooks.emit;
    this.agentRunner = hooks.agentRunner;
    this.runChild = hooks.runChild;
    this.waits = c.waits;
    this.now = hooks.now;
    this.wait = hooks.wait;
  }

  get logger(): Logger {
    return this.hooks.logger();
  }
}

export function stepEnv(def: WorkflowDefinition, c: ExecutionContext, hooks: StepEnvHooks): StepRunEnv {
  return new StepEnv(def, c, hooks);
}
