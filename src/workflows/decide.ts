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
import { retriesAfter, retryAtFor } from './retry-policy.js';

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
 * `onFailure` hears a run failed here rather than by a step (see RunFailure). While a failed
 * attempt waits for its retry there is nothing to decide (undefined): its timer starts the next
 * attempt (`retryDue`: the timer's own call, when the recorded retryAt has come).
 */
export function nextStepEvent(def: WorkflowDefinition | undefined, c: ExecutionContext, onFailure?: (failure: RunFailure) => void, options: { retryDue?: boolean } = {}): ExecutionEvent | undefined {
  if (c.retry && !options.retryDue) return undefined;
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
  const started: ExecutionEvent = { type: 'step.started', stepIndex: c.nextIndex, stepId: step.id, stepName: step.name ?? step.id, stepType: step.type, input: c.data, attempt: c.attempts + 1 };
  const stepAttempt = stepAttemptOf(c, step.id);
  return stepAttempt !== undefined ? { ...started, stepAttempt } : started;
}

/**
 * The run number of the next start of step `stepId` at `c.nextIndex`: the retry's when one waits;
 * the same number again when an attempt was interrupted (a crash, a takeover: no outcome was
 * recorded, so it did not fail); else the first (undefined: a record without the field reads as 1,
 * so runs that never retry record what they always did).
 */
function stepAttemptOf(c: ExecutionContext, stepId: string): number | undefined {
  if (c.retry && c.retry.stepId === stepId) return c.retry.attempt;
  const st = c.steps[stepId];
  if (st?.status === 'running' && st.index === c.nextIndex && st.stepAttempt !== undefined) return st.stepAttempt;
  return undefined;
}

/** Where a failed attempt's retry is decided: the time now and one random draw in [0, 1) (for the jitter). */
export interface RetryClock {
  now: number;
  random: number;
}

/** Whether a failed attempt of `step` (its run `stepAttempt`) is retried rather than failing the run. */
function retriesFailure(step: WorkflowStep, stepAttempt: number, o: StepOutcome): boolean {
  return o.kind === 'failed' && retriesAfter(step.retry, stepAttempt, o.retryable !== false);
}

/**
 * The event a top-level step's outcome becomes. A failure of a step whose `retry` policy has
 * attempts left (and a retryable error) becomes `step.retrying` with its `retryAt`, decided here
 * once from `retry` (the engine's clock and draw) and recorded, so no reader decides it again.
 */
export function outcomeEvent(
  workflowName: string,
  step: WorkflowStep,
  cur: { index: number; attempt: number; input: unknown; stepAttempt?: number },
  o: StepOutcome,
  retry?: RetryClock,
): ExecutionEvent {
  const base = {
    stepIndex: cur.index,
    stepId: step.id,
    stepName: step.name ?? step.id,
    stepType: step.type,
    input: cur.input,
    attempt: cur.attempt,
    ...(cur.stepAttempt !== undefined ? { stepAttempt: cur.stepAttempt } : {}),
  };
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
    case 'failed': {
      const stepAttempt = cur.stepAttempt ?? 1;
      if (retry && step.retry && retriesFailure(step, stepAttempt, o)) {
        return { type: 'step.retrying', ...base, stepAttempt, error: o.error, retryAt: retryAtFor(step.retry, stepAttempt, retry.now, retry.random) };
      }
      return { type: 'execution.failed', error: o.error, attempt: cur.attempt, workflowName };
    }
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
  readonly stepAttempt: number;
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
    this.stepAttempt = cur.stepAttempt ?? 1;
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
