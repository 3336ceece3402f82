/**
 * The workflow-execution machine (pure: no I/O). One execution = one actor of this machine; every
 * accepted event is one record of the execution's stream (type = event type, data = the rest), so
 * replaying the stream through this machine rebuilds the state exactly.
 *
 * Statuses (state values): running, suspended, completed, error, cancelled (docs/api-reference.md "Statuses and transitions").
 * Inside `running` the machine tracks the top-level step in flight (`current`) and the next one to
 * start (`nextIndex`). Step functions are effects: the engine starts them on `runStep` and their
 * outcome comes back as `step.completed` / `step.skipped` / `execution.suspended` /
 * `execution.failed`, tagged with the step's `attempt` so a late result of an aborted attempt is
 * rejected. Named actions are hooks for the effect runner: `advance` (start the next step or
 * complete), `runStep` (run the step just started), `settle` (the run left `running`), `armRetry`
 * (a failed attempt is to be tried again at its recorded `retryAt`).
 *
 * Durable retries: a failed attempt of a step with a `retry` policy and attempts left is recorded
 * as `step.retrying` (its error and `retryAt`) instead of `execution.failed`; the run stays
 * `running` with no step in flight and `retry` set, and only the start of that step's next
 * attempt (`step.started` with `stepAttempt` = `retry.attempt`) clears it. Per step, `stepAttempt`
 * numbers its runs from 1 (absent in streams recorded before retries existed: 1); the
 * execution-wide `attempt` tag stays what guards late outcomes.
 */
import { assign, setup } from 'xstate';

export const WORKFLOW_EXECUTION_KIND = 'workflow-execution';
/** Bump when a change makes old streams replay differently; replay under another version fails loudly. */
export const WORKFLOW_EXECUTION_VERSION = 1;

export type ExecutionStatus = 'running' | 'suspended' | 'completed' | 'error' | 'cancelled';
export type StepStatus = 'running' | 'success' | 'skipped' | 'suspended' | 'cancelled';

export interface StepState {
  index: number;
  input: unknown;
  output?: unknown;
  status: StepStatus;
  /** the step's run number (1 = first) of its last start; absent before retries existed */
  stepAttempt?: number;
}

export interface ErrorInfo {
  message: string;
  name?: string;
  stepId?: string;
}

export interface ReplaySeed {
  fromExecutionId: string;
  fromStepId: string;
  /** index of the step the replay starts at */
  startIndex: number;
  /** the input of that step */
  data: unknown;
  /** recorded states of the steps before it */
  steps: Record<string, StepState>;
  /** resume data for the start step only */
  resumeData?: unknown;
  hasResumeData?: boolean;
  replayedAt: number;
}

/** Data of the `execution.started` record. */
export interface ExecutionInput {
  executionId: string;
  workflowId: string;
  workflowName: string;
  stepIds: string[];
  input: unknown;
  context: Record<string, unknown>;
  workflowState: Record<string, unknown>;
  userId?: string;
  conversationId?: string;
  metadata: Record<string, unknown>;
  createdAt: number;
  parentExecutionId?: string;
  parentStepId?: string;
  replay?: ReplaySeed;
  /** the trace of the execution's spans: its own, or its parent's for a sub-workflow (set by the engine) */
  traceId?: string;
  /** an idempotent start's key and a digest of its validated input (src/workflows/idempotent-start.ts) */
  idempotency?: { key: string; inputDigest: string };
}

interface CurrentStep {
  index: number;
  stepId: string;
  attempt: number;
  input: unknown;
  /** the step's own run number (1 = first); absent in streams recorded before retries existed */
  stepAttempt?: number;
}

/** A failed attempt waiting for the next one (`step.retrying`): the step, the attempt to run next, when. */
interface RetryWait {
  stepIndex: number;
  stepId: string;
  /** the step's run number of the next attempt */
  attempt: number;
  /** epoch ms: the next attempt does not start before */
  at: number;
  error: ErrorInfo;
}

interface Suspension {
  stepIndex: number;
  stepId: string;
  reason: string;
  suspendData?: unknown;
  workflowState: Record<string, unknown>;
}

/**
 * A durable wait of a step (andSleep, andSleepUntil, andWaitForEvent), keyed in the context by the
 * waiting step's id. Recorded once by `step.waiting` when the step first reaches it; a later attempt
 * of the same top-level step (after a recovery or a resume) finds it and waits for the same due time
 * instead of starting over. `fired` is set by the one `step.wait.fired` the machine accepts for it.
 */
export interface WaitState {
  /** the top-level step the waiting step is (or is nested in) */
  topStepId: string;
  kind: 'sleep' | 'event';
  /** sleep: the due time (epoch ms) */
  until?: number;
  /** event: the event name waited for */
  name?: string;
  /** event: when the wait times out (epoch ms); absent = never */
  timeoutAt?: number;
  fired?: WaitFiring;
}

/** How a wait ended: its due time passed, a matching event came (its data), or it timed out. */
export interface WaitFiring {
  outcome: 'elapsed' | 'event' | 'timeout';
  eventId?: string;
  data?: unknown;
}

/** An event sent to one execution and kept until a wait of that name consumes it. */
export interface KeptEvent {
  eventId: string;
  name: string;
  data: unknown;
}

export interface ExecutionContext extends Omit<ExecutionInput, 'replay'> {
  data: unknown;
  steps: Record<string, StepState>;
  nextIndex: number;
  current: CurrentStep | null;
  /** number of `step.started` events so far: the attempt tag of the next one is `attempts + 1` */
  attempts: number;
  /** resume data waiting for (or held by) the step at `stepIndex` until it ends */
  resume: { stepIndex: number; resumeData?: unknown; suspendData?: unknown } | null;
  suspension: Suspension | null;
  result?: unknown;
  error?: ErrorInfo;
  cancelReason?: string;
  replayedFromExecutionId?: string;
  replayFromStepId?: string;
  /** the durable waits of the run's steps, by waiting step id (undefined in streams recorded before waits existed) */
  waits?: Record<string, WaitState>;
  /** events sent to this execution that no wait consumed yet, in arrival order */
  inbox?: KeptEvent[];
  /** every event id this execution took in (kept or consumed): a second delivery of one is rejected */
  eventIds?: Record<string, true>;
  /** set while a failed attempt waits for its retry (undefined/null otherwise) */
  retry?: RetryWait | null;
}

interface StepFields {
  stepIndex: number;
  stepId: string;
  stepName: string;
  stepType: string;
  input: unknown;
  attempt: number;
  /** the step's own run number (1 = first; absent = 1) */
  stepAttempt?: number;
}

export type ExecutionEvent =
  | ({ type: 'step.started' } & StepFields)
  | ({ type: 'step.completed'; output: unknown; workflowState?: Record<string, unknown>; usage?: Record<string, number> } & StepFields)
  | ({ type: 'step.skipped' } & StepFields)
  | ({ type: 'step.cancelled'; reason: string } & StepFields)
  | ({ type: 'step.retrying'; error: ErrorInfo; retryAt: number } & StepFields)
  | { type: 'step.event'; stepId: string; attempt: number; event: { type: string; [k: string]: unknown } }
  | ({ type: 'step.waiting'; stepId: string; attempt: number; waitId: string } & Omit<WaitState, 'topStepId' | 'fired'>)
  | ({ type: 'step.wait.fired'; stepId: string; attempt: number; waitId: string } & WaitFiring)
  | ({ type: 'execution.event.received' } & KeptEvent)
  | {
      type: 'execution.suspended';
      stepIndex: number;
      stepId: string;
      stepName: string;
      stepType: string;
      input: unknown;
      reason: string;
      suspendData?: unknown;
      workflowState?: Record<string, unknown>;
      /** set when the step itself suspended; absent for an external suspend */
      attempt?: number;
      workflowName: string;
    }
  | { type: 'execution.resumed'; stepIndex: number; stepId: string; resumeData?: unknown; input: unknown; workflowName: string }
  | { type: 'execution.recovered'; resumeStepIndex: number; input: unknown; workflowName: string }
  | { type: 'execution.completed'; result: unknown; workflowName: string }
  | { type: 'execution.failed'; error: ErrorInfo; attempt?: number; workflowName: string }
  | { type: 'execution.cancelled'; reason: string; workflowName: string };

type E<T extends ExecutionEvent['type']> = Extract<ExecutionEvent, { type: T }>;

/** The step a suspend would stop now: the one in flight, else the next one (if any is left). */
export function suspendableStepIndex(ctx: ExecutionContext): number | undefined {
  if (ctx.current) return ctx.current.index;
  return ctx.nextIndex < ctx.stepIds.length ? ctx.nextIndex : undefined;
}

const INERT_CONTEXT = {} as ExecutionContext;

/** The context after a wait recorded by `step.waiting`. */
const recordWait = (c: ExecutionContext, e: E<'step.waiting'>): Partial<ExecutionContext> => {
  const w: WaitState = { topStepId: e.stepId, kind: e.kind };
  if (e.until !== undefined) w.until = e.until;
  if (e.name !== undefined) w.name = e.name;
  if (e.timeoutAt !== undefined) w.timeoutAt = e.timeoutAt;
  return { waits: { ...c.waits, [e.waitId]: w } };
};

/** The context after the one firing of a wait: an event it took is consumed (out of the inbox, its id taken). */
const fireWait = (c: ExecutionContext, e: E<'step.wait.fired'>): Partial<ExecutionContext> => {
  const fired: WaitFiring = { outcome: e.outcome };
  if (e.eventId !== undefined) fired.eventId = e.eventId;
  if (e.data !== undefined) fired.data = e.data;
  const out: Partial<ExecutionContext> = { waits: { ...c.waits, [e.waitId]: { ...c.waits![e.waitId], fired } } };
  if (e.eventId !== undefined) {
    out.inbox = (c.inbox ?? []).filter((k) => k.eventId !== e.eventId);
    out.eventIds = { ...c.eventIds, [e.eventId]: true };
  }
  return out;
};

/** The context after an event sent to the execution is kept for a later wait. */
const keepEvent = (c: ExecutionContext, e: E<'execution.event.received'>): Partial<ExecutionContext> => ({
  inbox: [...(c.inbox ?? []), { eventId: e.eventId, name: e.name, data: e.data }],
  eventIds: { ...c.eventIds, [e.eventId]: true },
});

const endStep = (ctx: ExecutionContext, index: number) => (ctx.resume && ctx.resume.stepIndex === index ? null : ctx.resume);

export const workflowExecutionMachine = setup({
  types: {
    context: {} as ExecutionContext,
    events: {} as ExecutionEvent,
    input: {} as ExecutionInput,
  },
  actions: {
    advance: () => undefined,
    runStep: () => undefined,
    /** a custom step event: recorded, no state change (a transition needs an action to be accepted) */
    customEvent: () => undefined,
    settle: () => undefined,
    /** a wait was recorded: the engine arms its timer (due time or timeout) */
    armWait: () => undefined,
    /** a wait fired: the engine wakes the step waiting for it */
    waitFired: () => undefined,
    /** a failed attempt is to be tried again: the engine arms its timer for the recorded retryAt */
    armRetry: () => undefined,
  },
  guards: {
    canStart: ({ context: c, event }) => {
      const e = event as E<'step.started'>;
      if (!(c.current === null && e.stepIndex === c.nextIndex && c.stepIds[e.stepIndex] === e.stepId && e.attempt === c.attempts + 1)) return false;
      // while a retry waits, only that step's next attempt may start (the timer's one start)
      return !c.retry || (c.retry.stepIndex === e.stepIndex && (e.stepAttempt ?? 1) === c.retry.attempt);
    },
    /** a failed attempt of the step in flight is followed by the next one of that step */
    canRetry: ({ context: c, event }) => {
      const e = event as E<'step.retrying'>;
      return c.current !== null && c.current.attempt === e.attempt && c.current.index === e.stepIndex && c.current.stepId === e.stepId && (c.current.stepAttempt ?? 1) === (e.stepAttempt ?? 1);
    },
    isCurrent: ({ context: c, event }) => {
      const e = event as { stepIndex?: number; attempt: number };
      return c.current !== null && c.current.attempt === e.attempt && (e.stepIndex === undefined || c.current.index === e.stepIndex);
    },
    canSuspend: ({ context: c, event }) => {
      const e = event as E<'execution.suspended'>;
      if (e.attempt !== undefined) return c.current !== null && c.current.attempt === e.attempt && c.current.index === e.stepIndex && c.current.stepId === e.stepId;
      return suspendableStepIndex(c) === e.stepIndex && c.stepIds[e.stepIndex] === e.stepId;
    },
    /** a step records a wait once: the step in flight, a wait id not recorded yet */
    canWait: ({ context: c, event }) => {
      const e = event as E<'step.waiting'>;
      return c.current !== null && c.current.attempt === e.attempt && c.current.stepId === e.stepId && c.waits?.[e.waitId] === undefined;
    },
    /**
     * A wait fires once: it is recorded, not fired yet, and belongs to the attempt in flight (a timer
     * of an abandoned attempt, or one firing while the run is suspended, is turned away); an event
     * fires it only if this execution has not taken that event id in already, unless it is kept here.
     */
    canFireWait: ({ context: c, event }) => {
      const e = event as E<'step.wait.fired'>;
      const w = c.waits?.[e.waitId];
      if (!w || w.fired || c.current === null || c.current.attempt !== e.attempt || c.current.stepId !== e.stepId || w.topStepId !== e.stepId) return false;
      if (e.outcome === 'elapsed') return w.kind === 'sleep';
      if (e.outcome === 'timeout') return w.kind === 'event' && w.timeoutAt !== undefined;
      if (w.kind !== 'event' || e.eventId === undefined) return false;
      return c.eventIds?.[e.eventId] === undefined || (c.inbox ?? []).some((k) => k.eventId === e.eventId && k.name === w.name);
    },
    /** an event id is taken in once */
    canReceiveEvent: ({ context: c, event }) => c.eventIds?.[(event as E<'execution.event.received'>).eventId] === undefined,
    canComplete: ({ context: c }) => c.current === null && c.nextIndex === c.stepIds.length,
    canFail: ({ context: c, event }) => {
      const e = event as E<'execution.failed'>;
      return e.attempt === undefined || (c.current !== null && c.current.attempt === e.attempt);
    },
    canCancelRunning: ({ context: c }) => c.current === null,
    canRecover: ({ context: c, event }) => (event as E<'execution.recovered'>).resumeStepIndex === (c.current ? c.current.index : c.nextIndex),
    canResume: ({ context: c, event }) => {
      const e = event as E<'execution.resumed'>;
      return c.suspension !== null && e.stepIndex <= c.suspension.stepIndex && c.stepIds[e.stepIndex] === e.stepId && c.steps[e.stepId] !== undefined;
    },
  },
}).createMachine({
  id: WORKFLOW_EXECUTION_KIND,
  context: ({ input }) => {
    // xstate's pure transition()/initialTransition() build a throw-away actor that evaluates this
    // with no input on every call: answer cheaply instead of throwing (exceptions are costly)
    if (input === undefined) return INERT_CONTEXT;
    // the common start (no replay key): a plain spread, which V8 clones fast; rest destructuring does not
    if (!('replay' in input)) {
      return { ...input, data: input.input, steps: {}, nextIndex: 0, current: null, attempts: 0, resume: null, suspension: null };
    }
    const { replay, ...rest } = input;
    return {
      ...rest,
      data: replay ? replay.data : input.input,
      steps: replay ? { ...replay.steps } : {},
      nextIndex: replay ? replay.startIndex : 0,
      current: null,
      attempts: 0,
      resume: replay?.hasResumeData ? { stepIndex: replay.startIndex, resumeData: replay.resumeData } : null,
      suspension: null,
      ...(replay ? { replayedFromExecutionId: replay.fromExecutionId, replayFromStepId: replay.fromStepId } : {}),
    };
  },
  initial: 'running',
  states: {
    running: {
      entry: 'advance',
      on: {
        'step.started': {
          guard: 'canStart',
          actions: [
            assign(({ context: c, event }) => {
              const e = event as E<'step.started'>;
              const stepAttempt = e.stepAttempt ?? 1;
              // the fields retries added stay out of the context of runs that never retry (their snapshots are unchanged)
              const more = e.stepAttempt !== undefined ? { stepAttempt } : {};
              return {
                current: { index: e.stepIndex, stepId: e.stepId, attempt: e.attempt, input: e.input, ...more },
                attempts: e.attempt,
                steps: { ...c.steps, [e.stepId]: { index: e.stepIndex, input: e.input, status: 'running' as const, ...more } },
                ...(c.retry ? { retry: null } : {}),
              };
            }),
            'runStep',
          ],
        },
        'step.completed': {
          guard: 'isCurrent',
          actions: [
            assign(({ context: c, event }) => {
              const e = event as E<'step.completed'>;
              return {
                data: e.output,
                current: null,
                nextIndex: e.stepIndex + 1,
                resume: endStep(c, e.stepIndex),
                workflowState: e.workflowState ?? c.workflowState,
                steps: { ...c.steps, [e.stepId]: { index: e.stepIndex, input: e.input, output: e.output, status: 'success' as const } },
              };
            }),
            'advance',
          ],
        },
        'step.skipped': {
          guard: 'isCurrent',
          actions: [
            assign(({ context: c, event }) => {
              const e = event as E<'step.skipped'>;
              return {
                current: null,
                nextIndex: e.stepIndex + 1,
                resume: endStep(c, e.stepIndex),
                steps: { ...c.steps, [e.stepId]: { index: e.stepIndex, input: e.input, status: 'skipped' as const } },
              };
            }),
            'advance',
          ],
        },
        'step.cancelled': {
          guard: 'isCurrent',
          actions: assign(({ context: c, event }) => {
            const e = event as E<'step.cancelled'>;
            return { current: null, steps: { ...c.steps, [e.stepId]: { index: e.stepIndex, input: e.input, status: 'cancelled' as const } } };
          }),
        },
        'step.retrying': {
          guard: 'canRetry',
          actions: [
            assign(({ event }) => {
              const e = event as E<'step.retrying'>;
              return { current: null, retry: { stepIndex: e.stepIndex, stepId: e.stepId, attempt: (e.stepAttempt ?? 1) + 1, at: e.retryAt, error: e.error } };
            }),
            'armRetry',
          ],
        },
        'step.event': { guard: 'isCurrent', actions: 'customEvent' },
        'step.waiting': { guard: 'canWait', actions: [assign(({ context: c, event }) => recordWait(c, event as E<'step.waiting'>)), 'armWait'] },
        'step.wait.fired': { guard: 'canFireWait', actions: [assign(({ context: c, event }) => fireWait(c, event as E<'step.wait.fired'>)), 'waitFired'] },
        'execution.event.received': { guard: 'canReceiveEvent', actions: assign(({ context: c, event }) => keepEvent(c, event as E<'execution.event.received'>)) },
        'execution.suspended': {
          guard: 'canSuspend',
          target: 'suspended',
          actions: assign(({ context: c, event }) => {
            const e = event as E<'execution.suspended'>;
            const workflowState = e.workflowState ?? c.workflowState;
            return {
              current: null,
              nextIndex: e.stepIndex,
              resume: endStep(c, e.stepIndex),
              // a resumed step starts its attempts afresh
              ...(c.retry ? { retry: null } : {}),
              workflowState,
              steps: { ...c.steps, [e.stepId]: { index: e.stepIndex, input: e.input, status: 'suspended' as const } },
              suspension: {
                stepIndex: e.stepIndex,
                stepId: e.stepId,
                reason: e.reason,
                ...(e.suspendData !== undefined ? { suspendData: e.suspendData } : {}),
                workflowState,
              },
            };
          }),
        },
        'execution.recovered': {
          guard: 'canRecover',
          actions: [assign(({ event }) => ({ current: null, nextIndex: (event as E<'execution.recovered'>).resumeStepIndex })), 'advance'],
        },
        'execution.completed': {
          guard: 'canComplete',
          target: 'completed',
          actions: assign(({ event }) => ({ result: (event as E<'execution.completed'>).result })),
        },
        'execution.failed': {
          guard: 'canFail',
          target: 'error',
          actions: assign(({ context: c, event }) => ({ current: null, error: (event as E<'execution.failed'>).error, ...(c.retry ? { retry: null } : {}) })),
        },
        'execution.cancelled': {
          guard: 'canCancelRunning',
          target: 'cancelled',
          actions: assign(({ event }) => ({ cancelReason: (event as E<'execution.cancelled'>).reason })),
        },
      },
    },
    suspended: {
      entry: 'settle',
      on: {
        // an event sent while suspended is kept for the wait the resumed step reaches again
        'execution.event.received': { guard: 'canReceiveEvent', actions: assign(({ context: c, event }) => keepEvent(c, event as E<'execution.event.received'>)) },
        'execution.resumed': {
          guard: 'canResume',
          target: 'running',
          actions: assign(({ context: c, event }) => {
            const e = event as E<'execution.resumed'>;
            return {
              nextIndex: e.stepIndex,
              data: c.steps[e.stepId].input,
              workflowState: c.suspension!.workflowState,
              resume: {
                stepIndex: e.stepIndex,
                ...(e.resumeData !== undefined ? { resumeData: e.resumeData } : {}),
                // what the suspended step left (an andAgent step's waiting run), for that step only
                ...(e.stepIndex === c.suspension!.stepIndex && c.suspension!.suspendData !== undefined ? { suspendData: c.suspension!.suspendData } : {}),
              },
              suspension: null,
            };
          }),
        },
        'execution.cancelled': {
          target: 'cancelled',
          actions: assign(({ event }) => ({ suspension: null, cancelReason: (event as E<'execution.cancelled'>).reason })),
        },
      },
    },
    completed: { type: 'final', entry: 'settle' },
    error: { type: 'final', entry: 'settle' },
    cancelled: { type: 'final', entry: 'settle' },
  },
});

export type WorkflowExecutionMachine = typeof workflowExecutionMachine;

/** An execution's status: the state value of its actor's snapshot (the one definition of it). */
export function executionStatus(snapshot: { value: unknown }): ExecutionStatus {
  return snapshot.value as ExecutionStatus;
}

/**
 * The status an accepted record leaves the execution in, for readers that fold records instead of
 * running the machine (projections); undefined when the record does not change it. A property test
 * checks it against `executionStatus` of the machine's snapshot after every accepted event.
 */
export function statusAfterRecord(type: string): ExecutionStatus | undefined {
  return STATUS_AFTER[type];
}

const STATUS_AFTER: Readonly<Record<string, ExecutionStatus>> = {
  'execution.started': 'running',
  'execution.resumed': 'running',
  'execution.suspended': 'suspended',
  'execution.completed': 'completed',
  'execution.failed': 'error',
  'execution.cancelled': 'cancelled',
};
