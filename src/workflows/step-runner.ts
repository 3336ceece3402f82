/**
 * Runs one top-level step of an execution (any registered kind, nested ones included) and reports
 * its outcome: completed (output, changed workflowState, token usage), skipped, suspended, failed.
 * Pure of the log: the engine turns the outcome into an event. What differs by kind is the kind's
 * (src/workflows/steps/); what is the same for all is here:
 * returning nothing passes `data` through; `suspend()` stops the step at once; `retries` re-run a
 * throwing step at once (not when it has a durable `retry` policy, whose attempts the engine
 * records, nor after a NonRetryableError); `timeoutMs` fails an attempt that runs longer (its
 * signal is aborted); a step's declared `inputSchema` checks (and parses) its input before it runs, its
 * `outputSchema` its output after each run: a mismatch is a failure of that step (an output
 * mismatch is retried like any other failure); a pass-through kind (andTap) never fails the run.
 */
import type { Logger } from 'pino';
import type { ZodType } from 'zod';
import { formatIssues } from '../errors.js';
import { suggestName } from '../kernel/did-you-mean.js';
import type { StepContext, WorkflowStep } from './types.js';
import type { ErrorInfo } from '../../machines/workflow-execution.machine.js';
import { loggerFor } from '../kernel/logger-for.js';
import { DEFAULT_SUSPEND_REASON, SKIPPED, SuspendSignal, type StepOutcome, type StepRun, type StepRunEnv, type WaitSpec } from './steps/kind.js';
import type { WaitFiring } from '../../machines/workflow-execution.machine.js';
import { kindOf } from './steps/registry.js';
import { isRetryable, StepTimeoutError } from './retry-policy.js';

export { SuspendSignal, type ChildRunRequest, type StepOutcome, type StepRunEnv } from './steps/kind.js';

/** A sub-workflow ended in error: its own failing step was logged already (with this execution as its parent). */
export class SubWorkflowFailedError extends Error {
  /** retrying the parent step would find the same failed child: its own step had the retries */
  readonly nonRetryable = true;
  constructor(message: string) {
    super(message);
    // recorded as the parent's error: named like any step error, as before
  }
}

interface RunState {
  env: StepRunEnv;
  topStepId: string;
  workflowState: Record<string, unknown>;
  stateChanged: boolean;
  usage: Record<string, number> | undefined;
}

/**
 * The recorded output of a top-level step (undefined while it has not run, or when it was skipped).
 * An id that is no top-level step of the workflow is a mistake (a typo, or a nested step, whose
 * output is not recorded on its own): an error naming it and the ids that exist, rather than an
 * `undefined` that surfaces far from its cause.
 */
function stepResult<T>(env: StepRunEnv, stepId: string): T | undefined {
  if (!env.stepIds.includes(stepId)) {
    throw new Error(`getStepResult('${stepId}'): workflow '${env.workflowId}' has no top-level step '${stepId}'; ${suggestName(String(stepId), env.stepIds, 'its top-level steps')}`);
  }
  return env.stepResults[stepId]?.output as T | undefined;
}

function makeContext(rs: RunState, step: WorkflowStep, data: unknown, signal: AbortSignal): StepContext {
  const { env } = rs;
  let logger: Logger | undefined;
  return {
    data,
    // the resumed top-level step and everything nested in it see the resume data
    resumeData: env.resumeData,
    suspend(reason?: string, suspendData?: unknown): never {
      throw new SuspendSignal(reason ?? DEFAULT_SUSPEND_REASON, suspendData);
    },
    getStepResult: <T>(stepId: string) => stepResult<T>(env, stepId),
    getInitData: <T>() => env.initData as T,
    get workflowState() {
      return rs.workflowState;
    },
    set workflowState(v: Record<string, unknown>) {
      rs.workflowState = v;
      rs.stateChanged = true;
    },
    setWorkflowState(next) {
      rs.workflowState = typeof next === 'function' ? next(rs.workflowState) : next;
      rs.stateChanged = true;
    },
    context: env.context,
    userId: env.userId,
    conversationId: env.conversationId,
    executionId: env.executionId,
    workflowId: env.workflowId,
    attempt: env.stepAttempt ?? 1,
    signal,
    get logger() {
      // loggerFor, not child(): the execution's step logger already binds `stepId`, which must not appear twice
      return (logger ??= loggerFor(env.logger, { stepId: step.id }));
    },
    emit: (event) => env.emit(step.id, event),
  };
}

function addUsage(rs: RunState, usage: Record<string, number | undefined> | undefined): void {
  if (!usage) return;
  rs.usage ??= {};
  for (const [k, v] of Object.entries(usage)) if (typeof v === 'number' && Number.isFinite(v)) rs.usage[k] = (rs.usage[k] ?? 0) + v;
}

function abortError(signal: AbortSignal): Error {
  const r = signal.reason;
  return r instanceof Error ? r : new Error(typeof r === 'string' ? r : 'Step aborted');
}

/**
 * Checks a value against a declared schema: the parsed value, or the issues as text. Never throws
 * (a schema with async refinements cannot be checked synchronously: that is reported as the issue).
 */
export function checkDeclared(schema: ZodType, value: unknown): { ok: true; value: unknown } | { ok: false; issues: string } {
  try {
    const r = schema.safeParse(value);
    return r.success ? { ok: true, value: r.data } : { ok: false, issues: formatIssues(r.error.issues, '(root)') };
  } catch (err) {
    return { ok: false, issues: `(root): the schema cannot check the value (${(err as Error)?.message ?? String(err)})` };
  }
}

function stepSchemaError(step: WorkflowStep, what: 'input' | 'output', issues: string): Error {
  const err = new Error(`Step '${step.id}' ${what} does not match its ${what}Schema: ${issues}`);
  err.name = 'ValidationError';
  // the same input would fail the same way again; an output may differ on another attempt
  return what === 'input' ? Object.assign(err, { nonRetryable: true }) : err;
}

/** The declared output schema applied to a step's output (a pass-through kind returns its input: nothing to check). */
function checkStepOutput(step: WorkflowStep, out: unknown): unknown {
  if (!step.outputSchema || out === SKIPPED || kindOf(step).passThrough) return out;
  const r = checkDeclared(step.outputSchema, out);
  if (r.ok) return r.value;
  throw stepSchemaError(step, 'output', r.issues);
}

/** Runs a step of any kind on `data`; returns its output (or SKIPPED when it did not run). */
async function runAny(rs: RunState, step: WorkflowStep, input: unknown, signal: AbortSignal): Promise<unknown> {
  let data = input;
  if (step.inputSchema) {
    // checked once, outside the retries: the same input would fail the same way again
    const r = checkDeclared(step.inputSchema, input);
    if (!r.ok && kindOf(step).passThrough) {
      // a pass-through step (a tap) never fails the run: like its own errors, the mismatch is logged and data passes through
      rs.env.logger.error({ stepId: step.id, err: stepSchemaError(step, 'input', r.issues).message }, `${step.type} step failed (ignored)`);
      return input;
    }
    if (!r.ok) throw stepSchemaError(step, 'input', r.issues);
    data = r.value;
  }
  // a durable `retry` policy wins over immediate re-runs: its attempts are the engine's, recorded
  const retries = step.retry ? 0 : (step.retries ?? rs.env.retries);
  for (let attempt = 0; ; attempt++) {
    try {
      const out = step.timeoutMs === undefined || kindOf(step).ownTimeout ? await runOnce(rs, step, data, signal) : await runTimed(rs, step, data, signal, step.timeoutMs);
      return checkStepOutput(step, out);
    } catch (err) {
      if (err instanceof SuspendSignal || signal.aborted || attempt >= retries || !isRetryable(err)) throw err;
      loggerFor(rs.env.logger, { stepId: step.id }).warn({ attempt: attempt + 1, err }, 'step failed, retrying');
    }
  }
}

/**
 * One attempt under the step's `timeoutMs`: past it, the attempt's signal is aborted and the attempt
 * fails with a StepTimeoutError, whether or not the step's code heeds the signal (its late result is
 * dropped). Wall-clock time: it bounds how long the step's own code may run.
 */
async function runTimed(rs: RunState, step: WorkflowStep, data: unknown, signal: AbortSignal, ms: number): Promise<unknown> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new StepTimeoutError(step.id, ms);
      controller.abort(err);
      reject(err);
    }, ms);
  });
  try {
    const attempt = runOnce(rs, step, data, controller.signal);
    attempt.catch(() => undefined); // a late failure after the timeout is nobody's to hear
    return await Promise.race([attempt, timedOut]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

/** One attempt of a step: its kind runs it. */
async function runOnce(rs: RunState, step: WorkflowStep, data: unknown, signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) throw abortError(signal);
  return kindOf(step).run(step, new Attempt(rs, step, data, signal));
}

/** What a kind's `run` gets (steps/kind.ts StepRun): a class, so the per-attempt object is cheap to build. */
class Attempt implements StepRun {
  constructor(
    private readonly rs: RunState,
    private readonly step: WorkflowStep,
    readonly data: unknown,
    readonly signal: AbortSignal,
  ) {}

  get env(): StepRunEnv {
    return this.rs.env;
  }

  get topStepId(): string {
    return this.rs.topStepId;
  }

  context(): StepContext {
    return makeContext(this.rs, this.step, this.data, this.signal);
  }

  runNested(step: WorkflowStep, data: unknown, signal: AbortSignal): Promise<unknown> {
    return runAny(this.rs, step, data, signal);
  }

  suspend(reason: string, suspendData?: unknown): never {
    throw new SuspendSignal(reason, suspendData);
  }

  resumed(): { suspendData: unknown; resumeData: unknown } | undefined {
    const env = this.rs.env;
    return env.isResume ? { suspendData: env.suspendData, resumeData: env.resumeData } : undefined;
  }

  addUsage(usage: Record<string, number | undefined> | undefined): void {
    addUsage(this.rs, usage);
  }

  logger(): Logger {
    return loggerFor(this.rs.env.logger, { stepId: this.step.id });
  }

  now(): number {
    return this.rs.env.now ? this.rs.env.now() : Date.now();
  }

  wait(spec: () => WaitSpec | Promise<WaitSpec>): Promise<WaitFiring> {
    const env = this.rs.env;
    if (!env.wait) return Promise.reject(new Error(`Step '${this.step.id}' waits durably (${this.step.type}), which this runner does not support`));
    return env.wait({ waitId: this.step.id, topStepId: this.rs.topStepId, spec, signal: this.signal });
  }
}

function toErrorInfo(err: unknown, stepId?: string): ErrorInfo {
  const e = err as { message?: unknown; name?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return { message, name: typeof e?.name === 'string' ? e.name : 'Error', ...(stepId ? { stepId } : {}) };
}

/** Runs a top-level step to its outcome; never throws. */
export async function runTopLevelStep(step: WorkflowStep, env: StepRunEnv): Promise<StepOutcome> {
  const rs: RunState = { env, topStepId: step.id, workflowState: env.workflowState, stateChanged: false, usage: undefined };
  const state = () => (rs.stateChanged ? { workflowState: rs.workflowState } : {});
  try {
    const out = await runAny(rs, step, env.data, env.signal);
    if (out === SKIPPED) return { kind: 'skipped', ...state() };
    return { kind: 'completed', output: out, ...state(), ...(rs.usage ? { usage: rs.usage } : {}) };
  } catch (err) {
    if (err instanceof SuspendSignal) {
      return { kind: 'suspended', reason: err.reason, ...(err.suspendData !== undefined ? { suspendData: err.suspendData } : {}), ...state() };
    }
    // the one log line of a failed step (the run ends in error with it); an aborted step did not fail
    if (!env.signal.aborted && !(err instanceof SubWorkflowFailedError)) env.logger.warn({ err }, 'workflow step failed');
    return { kind: 'failed', error: toErrorInfo(err, step.id), ...(isRetryable(err) ? {} : { retryable: false as const }) };
  }
}
