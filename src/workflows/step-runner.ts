/**
 * Runs one top-level step of an execution (all seven kinds, nested ones included) and reports its
 * outcome: completed (output, changed workflowState, token usage), skipped, suspended, failed.
 * Pure of the log: the engine turns the outcome into an event. Semantics of decisions.md §9.1–9.3:
 * returning nothing passes `data` through; `suspend()` stops the step at once; `retries` re-run a
 * throwing step; andAll waits for all and fails with the first failure in declaration order;
 * andRace takes the first to settle and aborts the others without awaiting them; andTap never
 * fails the run. A step's declared `inputSchema` checks (and parses) its input before it runs, its
 * `outputSchema` its output after each run: a mismatch is a failure of that step (an output
 * mismatch is retried like any other failure).
 */
import type { Logger } from 'pino';
import type { ZodType } from 'zod';
import { formatIssues } from '../errors.js';
import { suggestName } from '../kernel/did-you-mean.js';
import type { StepContext, StepCustomEvent, SubWorkflowStep, WorkflowStep } from './types.js';
import {
  AgentRunnerMissingError,
  TOOL_APPROVAL_REASON,
  ToolApprovalDecision,
  ToolApprovalPendingError,
  toolApprovalSuspensionOf,
  type ToolApprovalSuspension,
  type WorkflowAgentResult,
  type WorkflowAgentRunner,
} from '../contract/agent-bridge.js';
import type { ErrorInfo } from '../../machines/workflow-execution.machine.js';
import { loggerFor } from '../kernel/logger-for.js';

/** Thrown by `suspend()`: unwinds the step function. */
export class SuspendSignal extends Error {
  constructor(readonly reason: string, readonly suspendData: unknown) {
    super(`Step suspended: ${reason}`);
    this.name = 'SuspendSignal';
  }
}

export const DEFAULT_SUSPEND_REASON = 'Step requested suspension';

/** A sub-workflow ended in error: its own failing step was logged already (with this execution as its parent). */
export class SubWorkflowFailedError extends Error {
  constructor(message: string) {
    super(message);
    // recorded as the parent's error: named like any step error, as before
  }
}

export interface ChildRunRequest {
  step: SubWorkflowStep;
  input: unknown;
  signal: AbortSignal;
  /** true when the parent is resuming this step (resume the suspended child) */
  isResume: boolean;
  resumeData: unknown;
}

export interface StepRunEnv {
  executionId: string;
  /** the execution's trace (an agent run of an andAgent step joins it) */
  traceId?: string;
  workflowId: string;
  data: unknown;
  resumeData: unknown;
  /** the suspension data the resumed step left when it suspended (undefined unless resuming it) */
  suspendData?: unknown;
  isResume: boolean;
  initData: unknown;
  stepResults: Record<string, { output?: unknown }>;
  /** the ids of the execution's top-level steps: the ids `getStepResult` accepts */
  stepIds: readonly string[];
  workflowState: Record<string, unknown>;
  context: Record<string, unknown>;
  userId?: string;
  conversationId?: string;
  signal: AbortSignal;
  logger: Logger;
  /** default retries of the workflow */
  retries: number;
  emit(stepId: string, event: StepCustomEvent): Promise<void>;
  agentRunner(): WorkflowAgentRunner | undefined;
  /** runs a sub-workflow as a child execution; resolves with its result, throws SuspendSignal when it suspends */
  runChild(request: ChildRunRequest): Promise<unknown>;
}

export type StepOutcome =
  | { kind: 'completed'; output: unknown; workflowState?: Record<string, unknown>; usage?: Record<string, number> }
  | { kind: 'skipped'; workflowState?: Record<string, unknown> }
  | { kind: 'suspended'; reason: string; suspendData?: unknown; workflowState?: Record<string, unknown> }
  | { kind: 'failed'; error: ErrorInfo };

const SKIPPED = Symbol('skipped');

interface RunState {
  env: StepRunEnv;
  topStepId: string;
  workflowState: Record<string, unknown>;
  stateChanged: boolean;
  usage: Record<string, number> | undefined;
}

/** Links a child controller to a parent signal (the child aborts when the parent does). */
function childController(parent: AbortSignal): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { controller, dispose: () => undefined };
  }
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  return { controller, dispose: () => parent.removeEventListener('abort', onAbort) };
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
  return err;
}

/** The declared output schema applied to a step's output (andTap passes data through: nothing to check). */
function checkStepOutput(step: WorkflowStep, out: unknown): unknown {
  if (!step.outputSchema || out === SKIPPED || step.type === 'andTap') return out;
  const r = checkDeclared(step.outputSchema, out);
  if (r.ok) return r.value;
  throw stepSchemaError(step, 'output', r.issues);
}

/** Runs any step kind on `data`; returns its output (or SKIPPED for a false andWhen). */
async function runAny(rs: RunState, step: WorkflowStep, input: unknown, signal: AbortSignal): Promise<unknown> {
  let data = input;
  if (step.inputSchema) {
    // checked once, outside the retries: the same input would fail the same way again
    const r = checkDeclared(step.inputSchema, input);
    if (!r.ok && step.type === 'andTap') {
      // a tap never fails the run: like its own errors, the mismatch is logged and data passes through
      rs.env.logger.error({ stepId: step.id, err: stepSchemaError(step, 'input', r.issues).message }, 'andTap step failed (ignored)');
      return input;
    }
    if (!r.ok) throw stepSchemaError(step, 'input', r.issues);
    data = r.value;
  }
  const retries = step.retries ?? rs.env.retries;
  for (let attempt = 0; ; attempt++) {
    try {
      return checkStepOutput(step, await runOnce(rs, step, data, signal));
    } catch (err) {
      if (err instanceof SuspendSignal || signal.aborted || attempt >= retries) throw err;
      loggerFor(rs.env.logger, { stepId: step.id }).warn({ attempt: attempt + 1, err }, 'step failed, retrying');
    }
  }
}

async function runOnce(rs: RunState, step: WorkflowStep, data: unknown, signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) throw abortError(signal);
  const ctx = () => makeContext(rs, step, data, signal);
  switch (step.type) {
    case 'andThen': {
      const out = await step.execute(ctx());
      return out === undefined ? data : out;
    }
    case 'andTap': {
      try {
        await step.execute(ctx());
      } catch (err) {
        if (err instanceof SuspendSignal) throw err;
        // a failure of the user's code, not of the server: warn
        loggerFor(rs.env.logger, { stepId: step.id }).warn({ err }, 'andTap step failed (ignored)');
      }
      return data;
    }
    case 'andWhen': {
      const ok = await step.condition(ctx());
      if (!ok) return SKIPPED;
      const out = await runAny(rs, step.step, data, signal);
      return out === SKIPPED ? data : out;
    }
    case 'andAll': {
      const links = step.steps.map(() => childController(signal));
      try {
        const settled = await Promise.allSettled(step.steps.map((s, i) => runAny(rs, s, data, links[i].controller.signal)));
        const failed = settled.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
        if (failed) throw failed.reason;
        return settled.map((r) => {
          const v = (r as PromiseFulfilledResult<unknown>).value;
          return v === SKIPPED ? data : v;
        });
      } finally {
        for (const l of links) l.dispose();
      }
    }
    case 'andRace': {
      const links = step.steps.map(() => childController(signal));
      try {
        return await new Promise<unknown>((resolve, reject) => {
          let done = false;
          step.steps.forEach((s, i) => {
            runAny(rs, s, data, links[i].controller.signal).then(
              (v) => settle(i, () => resolve(v === SKIPPED ? data : v)),
              (e) => settle(i, () => reject(e)),
            );
          });
          function settle(winner: number, finish: () => void) {
            if (done) return;
            done = true;
            links.forEach((l, j) => {
              if (j !== winner) l.controller.abort(new Error(`Lost the race in '${step.id}'`));
            });
            finish();
          }
        });
      } finally {
        for (const l of links) l.dispose();
      }
    }
    case 'andAgent': {
      const runner = rs.env.agentRunner();
      if (!runner) throw new AgentRunnerMissingError(step.agentId);
      const c = ctx();
      const waiting = rs.env.isResume ? toolApprovalSuspensionOf(rs.env.suspendData, step.id) : undefined;
      let res: WorkflowAgentResult;
      try {
        if (waiting) {
          // resuming a step whose run waits for approvals: the resume data is the decision
          const decision = ToolApprovalDecision.safeParse(rs.env.resumeData);
          if (!decision.success) throw new Error(`Resume data of step '${step.id}' must be { approved: boolean, reason?: string }: ${formatIssues(decision.error.issues, '(root)')}`);
          if (!runner.answer) throw new Error(`Cannot answer the approvals of run ${waiting.runId}: the agent runner does not support tool approvals`);
          res = await runner.answer(step.agentId, waiting.runId, decision.data, { schema: step.schema, signal });
        } else {
          const prompt = await step.prompt(data, c);
          res = await runner.run(step.agentId, prompt, {
            schema: step.schema,
            context: rs.env.context,
            userId: rs.env.userId,
            conversationId: rs.env.conversationId,
            signal,
            origin: { workflowId: rs.env.workflowId, executionId: rs.env.executionId, stepId: rs.topStepId, ...(rs.env.traceId ? { traceId: rs.env.traceId } : {}) },
          });
        }
      } catch (err) {
        if (!(err instanceof ToolApprovalPendingError)) throw err;
        const suspension: ToolApprovalSuspension = { type: 'tool-approval', stepId: step.id, agentId: err.agentId, runId: err.runId, approvals: err.approvals };
        throw new SuspendSignal(TOOL_APPROVAL_REASON, suspension);
      }
      addUsage(rs, res.usage);
      const raw = step.schema ? res.object : res.text;
      return step.map ? await step.map(raw, c) : raw;
    }
    case 'andWorkflow':
      return rs.env.runChild({ step, input: data, signal, isResume: rs.env.isResume, resumeData: rs.env.resumeData });
  }
}

export function toErrorInfo(err: unknown, stepId?: string): ErrorInfo {
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
    return { kind: 'failed', error: toErrorInfo(err, step.id) };
  }
}
