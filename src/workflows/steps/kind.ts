/**
 * The shape of a step kind: what one file under src/workflows/steps/ owns about a kind of step
 * (how it runs, its nested steps, what `GET /workflows/:id` shows of it, its resume schema, what
 * replay does with it), and what the step runner hands a kind while it runs. Also the pieces every
 * kind and the runner share: the suspend signal, the SKIPPED marker, the execution's step
 * environment. Types and small helpers only; the kinds themselves are registered in registry.ts.
 */
import type { Logger } from 'pino';
import type { ZodType } from 'zod';
import type { ErrorInfo, WaitFiring, WaitState } from '../../../machines/workflow-execution.machine.js';
import type { StepContext, StepCustomEvent, SubWorkflowStep, WorkflowDefinition, WorkflowStep } from '../types.js';
import type { WorkflowAgentRunner } from '../../contract/agent-bridge.js';

/** Thrown by `suspend()`: unwinds the step function. */
export class SuspendSignal extends Error {
  constructor(
    readonly reason: string,
    readonly suspendData: unknown,
  ) {
    super(`Step suspended: ${reason}`);
    this.name = 'SuspendSignal';
  }
}

export const DEFAULT_SUSPEND_REASON = 'Step requested suspension';

/** What a step returns when it did not run (a false andWhen): the step is recorded as skipped. */
export const SKIPPED: unique symbol = Symbol('skipped');

export interface ChildRunRequest {
  step: SubWorkflowStep;
  input: unknown;
  signal: AbortSignal;
  /** true when the parent is resuming this step (resume the suspended child) */
  isResume: boolean;
  resumeData: unknown;
}

/** What a durable wait waits for, as its step decides it the first time it reaches it (times in epoch ms). */
export type WaitSpec = { kind: 'sleep'; until: number } | { kind: 'event'; name: string; timeoutAt?: number };

/** A durable wait as the engine takes it: the waiting step's id, the top-level step it is in, its spec. */
export interface WaitRequest {
  waitId: string;
  topStepId: string;
  /** called only when the wait is not recorded yet (a later attempt waits for the recorded one) */
  spec(): WaitSpec | Promise<WaitSpec>;
  signal: AbortSignal;
}

/** The execution a top-level step runs in, as the engine (or replay) provides it. */
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
  /** the top-level step's run number (its `retry` attempts; 1 when absent) */
  stepAttempt?: number;
  emit(stepId: string, event: StepCustomEvent): Promise<void>;
  agentRunner(): WorkflowAgentRunner | undefined;
  /** runs a sub-workflow as a child execution; resolves with its result, throws SuspendSignal when it suspends */
  runChild(request: ChildRunRequest): Promise<unknown>;
  /** the durable waits recorded for the execution when the step started, by waiting step id */
  waits?: Readonly<Record<string, WaitState>>;
  /** the engine's clock (due times of waits) */
  now?(): number;
  /**
   * Records a durable wait (once) and resolves with its one firing; a host without durable waits
   * (none given) makes a waiting step fail, naming it.
   */
  wait?(request: WaitRequest): Promise<WaitFiring>;
}

export type StepOutcome =
  | { kind: 'completed'; output: unknown; workflowState?: Record<string, unknown>; usage?: Record<string, number> }
  | { kind: 'skipped'; workflowState?: Record<string, unknown> }
  | { kind: 'suspended'; reason: string; suspendData?: unknown; workflowState?: Record<string, unknown> }
  /** `retryable: false`: a failure no attempt may follow (a NonRetryableError, an input that fails its schema, a failed sub-workflow) */
  | { kind: 'failed'; error: ErrorInfo; retryable?: false };

/**
 * What a kind's `run` gets: one attempt of one step on its input. A step that waits (for a timer,
 * an event, a person) calls `suspend` with what it waits for; that data is recorded in the
 * `execution.suspended` record, and when the execution is resumed the same step runs again with
 * `resumed()` giving back that recorded data and the resume data, so it can complete from them.
 */
export interface StepRun {
  /** the step's input (already checked against its inputSchema) */
  readonly data: unknown;
  /** aborted when the step is abandoned (suspend, cancel, lost race) */
  readonly signal: AbortSignal;
  /** the execution the step runs in */
  readonly env: StepRunEnv;
  /** the top-level step this one is (or is nested in) */
  readonly topStepId: string;
  /** the context a step function of this step receives */
  context(): StepContext;
  /** runs a nested step (its schemas and retries included) on `data`; SKIPPED when it did not run */
  runNested(step: WorkflowStep, data: unknown, signal: AbortSignal): Promise<unknown>;
  /** stops the step and suspends the execution with `suspendData` recorded; never returns */
  suspend(reason: string, suspendData?: unknown): never;
  /** when the execution is being resumed at this step: the recorded suspension data and the resume data */
  resumed(): { suspendData: unknown; resumeData: unknown } | undefined;
  /** adds an agent run's token usage to the step's */
  addUsage(usage: Record<string, number | undefined> | undefined): void;
  /** the step's logger (bound to its id) */
  logger(): Logger;
  /** the current time of the engine's clock (epoch ms) */
  now(): number;
  /**
   * Waits durably (andSleep, andWaitForEvent): the first attempt records the wait `spec()` describes,
   * a later attempt (after a crash, a resume) waits for the recorded one; resolves with its firing.
   */
  wait(spec: () => WaitSpec | Promise<WaitSpec>): Promise<WaitFiring>;
}

/** Describes a nested step as `GET /workflows/:id` shows it (the describer of the kind that holds it). */
export type DescribeChild = (step: WorkflowStep, index: number) => Record<string, unknown>;

/**
 * One kind of step. Everything that differs from kind to kind lives here, so the step runner, the
 * tree walk, `describe`, the resume checks and replay dispatch through the kind instead of testing
 * step types; adding a kind is its file plus one line in registry.ts (or `registerStepKind`).
 */
export interface StepKind<S extends { type: string } = WorkflowStep> {
  readonly type: S['type'];
  /** how the console names a step holding others (`parallel`, `branch`…); none for a leaf */
  readonly nest?: string;
  /**
   * How a holding step's output relates to its nested steps' (the console shows a nested step's
   * share): `by-index` the output is an array, one entry per nested step; `whole` it is the nested
   * step's output. None when the output is the step's own.
   */
  readonly childOutput?: 'by-index' | 'whole';
  /** the step passes its input through: its outputSchema does not apply and its failures (an input mismatch too) are logged, never the run's */
  readonly passThrough?: boolean;
  /**
   * the step's `timeoutMs` is its own durable deadline (andWaitForEvent: how long to wait for the
   * event, recorded with the wait), not the common per-attempt timeout of a step's code
   */
  readonly ownTimeout?: boolean;
  /** the steps nested directly in the step, in declaration order (a sub-workflow's steps are its own) */
  children(step: S): readonly WorkflowStep[];
  /** the workflows the step runs as child executions */
  subWorkflows?(step: S): readonly WorkflowDefinition[];
  /** one attempt of the step; returns its output (SKIPPED when it did not run) */
  run(step: S, run: StepRun): Promise<unknown>;
  /** the fields `GET /workflows/:id` adds for this kind (the common ones are written for every kind) */
  describe?(step: S, describeChild: DescribeChild): Record<string, unknown>;
  /** the schema resume data must pass when the execution is suspended at this (top-level) step; default its own resumeSchema */
  resumeSchema?(step: S): ZodType | undefined;
  /**
   * The schema resume data must pass when the execution is suspended with `suspension` in this step
   * or a step under it (sub-workflows included), whatever schema the steps declare: the data a
   * suspension of this kind waits for (andAgent: a tool-approval decision). Asked before `resumeSchema`.
   */
  suspensionResumeSchema?(step: S, suspension: { reason: string; suspendData?: unknown }): ZodType | undefined;
  replay?: {
    /** the step's effect lives in another stream (an agent run, a child execution): live replay feeds it its recorded outcome */
    foreignEffect?: boolean;
    /**
     * Replay that feeds recorded outcomes still runs workflow code that decides the path (a branch
     * condition): the step to run, with `fed(inner)` standing in for the effect `inner` had. A kind
     * without it is fed whole; a kind with it that now skips or runs where the recording did not is
     * a `branch` divergence.
     */
    feed?(step: S, fed: (inner: WorkflowStep) => WorkflowStep): WorkflowStep;
  };
}

/** Links a child controller to a parent signal (the child aborts when the parent does). */
export function childController(parent: AbortSignal): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { controller, dispose: () => undefined };
  }
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  return { controller, dispose: () => parent.removeEventListener('abort', onAbort) };
}
