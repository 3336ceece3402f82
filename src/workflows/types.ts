/**
 * Public types of workflow definitions: the step kinds built by `src/workflows/builder.ts`, the
 * context a step function receives, and the definition object the engine runs and the HTTP layer
 * describes. Definitions are plain data plus functions; nothing here does I/O.
 */
import type { ZodType } from 'zod';
import type { Logger } from 'pino';
import type { RetryPolicy } from './retry-policy.js';

/** A custom event a step writes to the execution's stream (SSE `event:` = its `type`). */
export interface StepCustomEvent {
  type: string;
  status?: string;
  [key: string]: unknown;
}

/** What a step function receives. */
export interface StepContext<TData = any, TResume = any> {
  /** the step's input: the previous step's output (the workflow input for the first step) */
  data: TData;
  /** resume data when this step is being resumed (undefined otherwise) */
  resumeData: TResume | undefined;
  /** stops the step at once and suspends the execution; never returns */
  suspend(reason?: string, suspendData?: unknown): never;
  /** recorded output of an earlier top-level step */
  getStepResult<T = unknown>(stepId: string): T | undefined;
  /** the workflow's original input */
  getInitData<T = unknown>(): T;
  /** shared state across steps (a copy: change it with setWorkflowState) */
  workflowState: Record<string, unknown>;
  setWorkflowState(next: Record<string, unknown> | ((prev: Record<string, unknown>) => Record<string, unknown>)): void;
  /** the caller's `options.context` (+ `user` when authenticated) */
  context: Record<string, unknown>;
  userId?: string;
  conversationId?: string;
  executionId: string;
  workflowId: string;
  /** the top-level step's run number under its `retry` policy: 1 on the first attempt, 2 on the next, ... */
  attempt: number;
  /** aborted when the execution is suspended or cancelled from outside, or a race is lost */
  signal: AbortSignal;
  logger: Logger;
  /** writes a custom event to the execution's stream */
  emit(event: StepCustomEvent): Promise<void>;
}

export type StepFunction<TIn = any, TOut = any> = (ctx: StepContext<TIn>) => TOut | Promise<TOut>;

/** What every step kind has: its id among its siblings, its labels, its declared schemas, its retries. */
export interface StepBase {
  id: string;
  name?: string;
  purpose?: string;
  inputSchema?: ZodType;
  outputSchema?: ZodType;
  suspendSchema?: ZodType;
  resumeSchema?: ZodType;
  /** re-runs a throwing step this many more times, at once and in memory (ignored when `retry` is set) */
  retries?: number;
  /** durable attempts of a top-level step, spaced by a recorded backoff (retry-policy.ts) */
  retry?: RetryPolicy;
  /** an attempt running longer than this many ms fails (its signal is aborted); a retryable failure */
  timeoutMs?: number;
}

export interface ThenStep extends StepBase {
  type: 'andThen';
  execute: StepFunction;
}

export interface WhenStep extends StepBase {
  type: 'andWhen';
  condition: (ctx: StepContext) => boolean | Promise<boolean>;
  step: WorkflowStep;
}

export interface AllStep extends StepBase {
  type: 'andAll';
  steps: WorkflowStep[];
}

export interface RaceStep extends StepBase {
  type: 'andRace';
  steps: WorkflowStep[];
}

export interface TapStep extends StepBase {
  type: 'andTap';
  execute: StepFunction;
}

export interface AgentStep extends StepBase {
  type: 'andAgent';
  agentId: string;
  prompt: (data: any, ctx: StepContext) => string | Promise<string>;
  schema?: ZodType;
  /** turns the agent's output (the object when a schema is given, else the text) into the step output */
  map?: (output: any, ctx: StepContext) => unknown;
}

export interface SubWorkflowStep extends StepBase {
  type: 'andWorkflow';
  workflow: WorkflowDefinition;
}

/**
 * Every step kind by its `type`. A kind file (src/workflows/steps/) adds its step here with a module
 * augmentation of this module's `StepKinds` (a `declare module` of this file, relative to the kind's
 * own file, adding e.g. `sleep: SleepStep`), so the union below grows without this file changing.
 */
export interface StepKinds {
  andThen: ThenStep;
  andWhen: WhenStep;
  andAll: AllStep;
  andRace: RaceStep;
  andTap: TapStep;
  andAgent: AgentStep;
  andWorkflow: SubWorkflowStep;
}

export type StepType = keyof StepKinds;

export type WorkflowStep = StepKinds[StepType];

export interface WorkflowConfig {
  id: string;
  name?: string;
  purpose?: string;
  input?: ZodType;
  result?: ZodType;
  suspendSchema?: ZodType;
  resumeSchema?: ZodType;
  /** default retries of every step that sets none */
  retries?: number;
}

export interface WorkflowDefinition {
  readonly kind: 'eventloom.workflow';
  readonly id: string;
  readonly name: string;
  readonly purpose: string;
  readonly input?: ZodType;
  readonly result?: ZodType;
  readonly suspendSchema?: ZodType;
  readonly resumeSchema?: ZodType;
  readonly retries: number;
  readonly steps: readonly WorkflowStep[];
}

export function isWorkflowDefinition(value: unknown): value is WorkflowDefinition {
  return !!value && typeof value === 'object' && (value as { kind?: unknown }).kind === 'eventloom.workflow';
}
