/**
 * The workflow engine: the execution actor kind and its effects. Each execution is an actor of
 * `machines/workflow-execution.machine.ts` hosted by the ActorHost; the engine's effect runner starts the next
 * step (`advance`), runs a started step (`runStep`) and aborts the step in flight when the run
 * leaves `running` (`settle`). A step's outcome comes back as an event tagged with its attempt.
 * Sub-workflows run as child executions (stream `exec:<parent>/<step>`) awaited by the parent step.
 *
 * Commands (execute, resume, suspend, cancel, replay) live in `commands.ts`; boot-time recovery and
 * graceful stop are here because they concern the effects.
 *
 * Durable retries: a failed attempt with attempts left is recorded as `step.retrying` (retryAt
 * decided once, with its jitter, by decide.ts outcomeEvent); its timer lives in the durable waits'
 * heap and, when due, appends the step's next `step.started` only if the run still waits for that
 * very retry (the machine accepts that one start, once; on PostgreSQL only the owner's fenced
 * append lands). An execution recovered at boot or taken over while it waits re-arms the timer
 * for the recorded retryAt through `advance`.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { EventLog, LogRecord } from '../log/types.js';
import { StoreFaultError } from '../log/store-health.js';
import { EventRejectedError, type Actor, type ActorHost, type ActorKind, type EventBuilder } from '../runtime/actor-host.js';
import {
  WORKFLOW_EXECUTION_KIND,
  WORKFLOW_EXECUTION_VERSION,
  workflowExecutionMachine,
  type ExecutionEvent,
  type ExecutionInput,
  type WorkflowExecutionMachine,
  executionStatus,
} from '../../machines/workflow-execution.machine.js';
import type { WorkflowDefinition, WorkflowStep } from './types.js';
import type { WorkflowAgentRunner } from '../contract/agent-bridge.js';
import { externalSuspendEvent, newExecutionInput } from './execution-input.js';
import { runTopLevelStep, SubWorkflowFailedError, SuspendSignal, type ChildRunRequest, type StepOutcome, type StepRunEnv } from './step-runner.js';
import { nextStepEvent, outcomeEvent, stepEnv, traceOf, type RunFailure } from './decide.js';
import { ExecutionFanout } from './execution-fanout.js';
import { childExecutionId, executionStream } from './events.js';
import { loggerFor } from '../kernel/logger-for.js';
import { collectDefinitions } from './steps/walk.js';
import { traceIdFor } from '../kernel/span-types.js';
import { systemClock, type Clock } from '../kernel/clock.js';
import { DurableWaits, RETRY_TIMER_ID, timerKeyOf } from './durable-waits.js';

/** The cause of a run whose result fails its schema, as logged (no stack: the engine's frames say nothing about the result). */
class ValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ValidationError';
    this.stack = `${this.name}: ${message}`;
  }
}

export type ExecActor = Actor<WorkflowExecutionMachine>;
export type ExecSnapshot = ExecActor['snapshot'];

/** Why a step's signal was aborted. */
class StepAbort extends Error {
  constructor(
    readonly kind: 'suspend' | 'cancel' | 'race',
    message: string,
  ) {
    super(message);
    this.name = 'StepAbort';
  }
}

interface StepScratch {
  attempt: number;
  controller: AbortController;
}

export interface WorkflowEngineOptions {
  log: EventLog;
  host: ActorHost;
  logger: Logger;
  workflows: readonly WorkflowDefinition[];
  /** the runner of andAgent steps (the agents module's), read when a step runs */
  agentRunner?: () => WorkflowAgentRunner | undefined;
  newId?: () => string;
  /** runs a top-level step (default `runTopLevelStep`); the testing helper and replay substitute their own */
  runStep?: (step: WorkflowStep, env: StepRunEnv) => Promise<StepOutcome>;
  /** the time of durable waits (due times, timers); default: the host's clock and real timers */
  clock?: Clock;
  /** the jitter draw of a retry's backoff, in [0, 1) (default Math.random) */
  random?: () => number;
}

export const statusOf = (snap: ExecSnapshot) => executionStatus(snap);

export class WorkflowEngine {
  readonly log: EventLog;
  readonly host: ActorHost;
  readonly logger: Logger;
  readonly fanout: ExecutionFanout;
  readonly kind: ActorKind<WorkflowExecutionMachine>;
  /** top-level workflows, in registration order */
  readonly workflows = new Map<string, WorkflowDefinition>();
  /** every definition an execution may run (sub-workflows included) */
  private readonly definitions: ReadonlyMap<string, WorkflowDefinition>;
  private readonly inflight = new Set<Promise<void>>();
  /** executions with a step running in this process: id → number of step tasks */
  private readonly stepsInFlight = new Map<string, number>();
  /** running executions whose next step was not started because the engine is stopping */
  private readonly heldByStop = new Set<string>();
  private readonly agentRunner: () => WorkflowAgentRunner | undefined;
  readonly newId: () => string;
  private readonly runStep: (step: WorkflowStep, env: StepRunEnv) => Promise<StepOutcome>;
  /** custom execution ids being created right now (a concurrent duplicate is a 409) */
  readonly reservedIds = new Set<string>();
  /** durable waits: their timers and the steps waiting on them */
  readonly waits: DurableWaits;
  private stopping = false;
  private readonly random: () => number;

  constructor(options: WorkflowEngineOptions) {
    this.log = options.log;
    this.host = options.host;
    this.logger = options.logger;
    this.agentRunner = options.agentRunner ?? (() => undefined);
    this.newId = options.newId ?? randomUUID;
    this.runStep = options.runStep ?? runTopLevelStep;
    this.random = options.random ?? Math.random;
    for (const def of options.workflows) {
      if (this.workflows.has(def.id)) throw new Error(`Workflow id '${def.id}' is registered twice`);
      this.workflows.set(def.id, def);
    }
    this.definitions = collectDefinitions(options.workflows);
    const clock: Clock = options.clock ?? { now: () => this.host.clock(), setTimer: systemClock.setTimer };
    this.waits = new DurableWaits({ dispatch: (actor, event) => this.dispatch(actor, event), definition: (id) => this.definitions.get(id), logger: this.logger }, clock);
    this.fanout = new ExecutionFanout(this.log, (err) => this.logger.error({ err }, 'workflow feed listener failed'));
    this.kind = {
      kind: WORKFLOW_EXECUTION_KIND,
      version: WORKFLOW_EXECUTION_VERSION,
      logic: workflowExecutionMachine,
      createdType: 'execution.started',
      runEffects: (actor, event, actions, reached) => this.runEffects(actor, event as ExecutionEvent | undefined, actions, reached),
      followUp: (_actor, snap, actions) => this.followUp(snap, actions),
      isTerminal: (snap) => snap.value !== 'running',
    };
  }

  definition(workflowId: string): WorkflowDefinition | undefined {
    return this.definitions.get(workflowId);
  }

  /** Sends (a builder of) events to an execution; rejections of stale events are expected and dropped. */
  dispatch(actor: ExecActor, event: ExecutionEvent | EventBuilder<WorkflowExecutionMachine>): void {
    actor.send(event as never).catch((err) => {
      if (err instanceof EventRejectedError) return;
      // refused by a store fault: logged once by the store's change of state; the run resumes when it is back
      if (err instanceof StoreFaultError) return;
      this.logger.error({ err, stream: actor.stream }, 'workflow execution event failed');
    });
  }

  private runEffects(actor: ExecActor, event: ExecutionEvent | undefined, actions: ReadonlyArray<{ type: string }>, reached: ExecSnapshot): void {
    for (const a of actions) {
      if (a.type === 'advance') this.advance(actor);
      else if (a.type === 'armWait' && event?.type === 'step.waiting') this.waits.armed(actor, event, reached.context);
      else if (a.type === 'waitFired' && event?.type === 'step.wait.fired') this.waits.fired(reached.context.executionId, event, reached.context);
      else if (a.type === 'runStep') this.startStep(actor, reached);
      else if (a.type === 'armRetry' && reached.context.retry) this.armRetry(actor, reached.context.retry);
      else if (a.type === 'settle') this.abortStep(actor, statusOf(actor.snapshot));
    }
  }

  /**
   * What `advance` would decide, decided with the event that asked for it so both go out in one append:
   * the run's start and its first step, a step's outcome and the next step (or the run's completion), a
   * resume or recovery and the step it runs. Not while stopping: `advance` then holds the run back.
   */
  private followUp(snap: ExecSnapshot, actions: ReadonlyArray<{ type: string }>): ExecutionEvent | undefined {
    if (this.stopping || snap.value !== 'running' || snap.context.current) return undefined;
    if (!actions.some((a) => a.type === 'advance')) return undefined;
    const c = snap.context;
    return nextStepEvent(this.definitions.get(c.workflowId), c, (message) => this.logEngineFailure(c, message));
  }

  /** Starts the next step, or completes the run when none is left (decided on the state it applies to). */
  private advance(actor: ExecActor): void {
    if (this.stopping) {
      // the execution stays `running` in the log: the next start recovers it
      if (actor.snapshot.value === 'running') this.heldByStop.add(actor.snapshot.context.executionId);
      return;
    }
    const now = actor.snapshot;
    // a recovered (or taken over) run waiting for a retry: its timer again, for the recorded retryAt
    if (now.value === 'running' && !now.context.current && now.context.retry) return this.armRetry(actor, now.context.retry);
    this.dispatch(actor, (snap) => {
      const c = snap.context;
      if (this.stopping || snap.value !== 'running' || c.current) return [];
      return nextStepEvent(this.definitions.get(c.workflowId), c, (failure) => this.logEngineFailure(c, failure)) ?? [];
    });
  }

  /**
   * Arms the timer of a retry for its recorded time. When due, it starts the step's next attempt if
   * the run still waits for this retry (not cancelled, suspended or already started meanwhile).
   */
  private armRetry(actor: ExecActor, retry: NonNullable<ExecSnapshot['context']['retry']>): void {
    if (this.stopping) return;
    const key = timerKeyOf(actor.snapshot.context.executionId, RETRY_TIMER_ID);
    this.waits.timers.arm(key, retry.at, () =>
      this.dispatch(actor, (snap) => {
        const c = snap.context;
        if (this.stopping || snap.value !== 'running' || c.current || c.retry?.stepIndex !== retry.stepIndex || c.retry.attempt !== retry.attempt) return [];
        return nextStepEvent(this.definitions.get(c.workflowId), c, (failure) => this.logEngineFailure(c, failure), { retryDue: true }) ?? [];
      }),
    );
  }

  /**
   * A run that fails without a failing step, logged once: one the engine cannot go on with at error
   * (the server's failure); a result that fails the workflow's result schema at warn, like a failing
   * step (the workflow code's failure), with the cause as the error.
   */
  private logEngineFailure(c: ExecSnapshot['context'], failure: RunFailure | string): void {
    const { message, cause } = typeof failure === 'string' ? { message: failure, cause: 'engine' } : failure;
    const ids = { workflowId: c.workflowId, executionId: c.executionId, ...(c.parentExecutionId ? { parentExecutionId: c.parentExecutionId } : {}) };
    if (cause === 'engine') return this.logger.error(ids, message);
    this.logger.warn({ ...ids, err: new ValidationError(message) }, 'workflow result rejected');
  }

  private engineFailure(c: ExecSnapshot['context'], message: string): ExecutionEvent {
    this.logEngineFailure(c, message);
    return { type: 'execution.failed', error: { message, name: 'Error' }, workflowName: c.workflowName };
  }

  private abortStep(actor: ExecActor, status: string): void {
    const scratch = actor.scratch.step as StepScratch | undefined;
    if (!scratch) return;
    actor.scratch.step = undefined;
    const cause = status === 'suspended' ? 'suspend' : 'cancel';
    scratch.controller.abort(new StepAbort(cause, cause === 'suspend' ? 'Execution suspended' : `Execution ${status}`));
  }

  /**
   * Runs the step the `step.started` that reached `reached` opened; its outcome comes back as an event.
   * Effects start once that record is durable, and a cancel or suspension decided meanwhile has closed
   * the step already: then it never starts (its records say so: started, then the run settled).
   */
  private startStep(actor: ExecActor, reached: ExecSnapshot): void {
    const c = reached.context;
    const cur = c.current!;
    const now = actor.snapshot.context.current;
    if (now?.index !== cur.index || now.attempt !== cur.attempt) return;
    const def = this.definitions.get(c.workflowId)!;
    const step = def.steps[cur.index];
    const controller = new AbortController();
    const scratch: StepScratch = { attempt: cur.attempt, controller };
    actor.scratch.step = scratch;
    const engineLogger = this.logger;
    let stepLogger: Logger | undefined;
    const task = (async () => {
      await Promise.resolve();
      const env = stepEnv(def, c, {
        signal: controller.signal,
        // created on first use: most steps never log, and a pino child per step is not free
        logger: () => (stepLogger ??= loggerFor(engineLogger, { workflowId: c.workflowId, executionId: c.executionId, parentExecutionId: c.parentExecutionId, stepId: step.id })),
        emit: async (stepId, event) => {
          if (!event || typeof event.type !== 'string' || event.type.length === 0) throw new TypeError('emit() needs an event with a string type');
          if (controller.signal.aborted) return;
          await actor.send({ type: 'step.event', stepId, attempt: cur.attempt, event } as never).catch((err) => {
            if (!(err instanceof EventRejectedError)) throw err;
          });
        },
        agentRunner: this.agentRunner,
        runChild: (req) => this.runChild(actor, step.id, req),
        wait: (req) => this.waits.wait(actor, cur.attempt, req),
        now: () => this.waits.clock.now(),
      });
      const outcome = await this.runStep(step, env);
      if (controller.signal.aborted) return; // the run was suspended or cancelled meanwhile
      if (actor.scratch.step === scratch) actor.scratch.step = undefined;
      if (this.stopping && outcome.kind === 'failed') {
        // The stop itself may be why it failed (an agent run aborted at shutdown): recorded, it would
        // end the run in error. Unrecorded, the step counts as interrupted and runs again when the
        // next start recovers the execution, like any step still in flight at shutdown.
        this.heldByStop.add(c.executionId);
        return;
      }
      this.dispatch(actor, outcomeEvent(c.workflowName, step, cur, outcome, { now: this.waits.clock.now(), random: this.random() }));
    })();
    this.track(task, c.executionId);
  }

  private track(task: Promise<void>, executionId?: string): void {
    const p = task.catch((err) => this.logger.error({ err }, 'workflow step runner failed'));
    this.inflight.add(p);
    if (executionId !== undefined) this.stepsInFlight.set(executionId, (this.stepsInFlight.get(executionId) ?? 0) + 1);
    void p.finally(() => {
      this.inflight.delete(p);
      if (executionId === undefined) return;
      const n = (this.stepsInFlight.get(executionId) ?? 1) - 1;
      if (n > 0) this.stepsInFlight.set(executionId, n);
      else this.stepsInFlight.delete(executionId);
    });
  }

  /** Creates an execution actor and returns a promise of its first settling record. */
  async createExecution(input: ExecutionInput, options: { freshStream?: boolean } = {}): Promise<{ settled: Promise<LogRecord>; seq: number }> {
    const stream = executionStream(input.executionId);
    const settled = this.fanout.waitForSettle(stream, 0);
    // the trace id is recorded, so the record views and the traces projection agree on it (span-types.ts)
    const data: ExecutionInput = input.traceId ? input : { ...input, traceId: traceIdFor(stream) };
    const res = await this.host.create(this.kind, stream, data, { ...options, at: input.createdAt });
    return { settled, seq: res.seq };
  }

  /** Runs a sub-workflow as the child execution of a parent step (see the header). */
  private async runChild(parent: ExecActor, topStepId: string, req: ChildRunRequest): Promise<unknown> {
    const pc = parent.snapshot.context;
    const childId = childExecutionId(pc.executionId, topStepId, req.step.id);
    const stream = executionStream(childId);
    const def = req.step.workflow;
    let settled: Promise<LogRecord | ExecSnapshot>;
    if ((await this.log.streamHead(stream)) === 0) {
      const parsed = def.input ? def.input.safeParse(req.input) : { success: true as const, data: req.input };
      if (!parsed.success) throw new Error(`Sub-workflow ${def.id} input validation failed: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
      const created = await this.createExecution(
        newExecutionInput(def, childId, {
          input: parsed.data,
          context: pc.context,
          userId: pc.userId,
          conversationId: pc.conversationId,
          createdAt: this.host.clock(),
          parentExecutionId: pc.executionId,
          parentStepId: topStepId,
          traceId: traceOf(pc),
        }),
      );
      settled = created.settled;
    } else {
      const child = await this.host.load(this.kind, stream);
      settled = new Promise<LogRecord | ExecSnapshot>((resolve, reject) => {
        child
          .send((snap, streamSeq) => {
            const status = statusOf(snap);
            if (status === 'running') {
              resolve(this.fanout.waitForSettle(stream, streamSeq + 1));
              if (this.host.peek(stream) === child && child.scratch.step) return []; // live and working
              const c = snap.context;
              return { type: 'execution.recovered', resumeStepIndex: c.current ? c.current.index : c.nextIndex, input: c.input, workflowName: c.workflowName };
            }
            if (status === 'suspended' && req.isResume) {
              resolve(this.fanout.waitForSettle(stream, streamSeq + 1));
              const s = snap.context.suspension!;
              return {
                type: 'execution.resumed',
                stepIndex: s.stepIndex,
                stepId: s.stepId,
                ...(req.resumeData !== undefined ? { resumeData: req.resumeData } : {}),
                input: snap.context.input,
                workflowName: snap.context.workflowName,
              };
            }
            resolve(snap);
            return [];
          })
          .catch(reject);
      });
    }
    const onAbort = () => {
      const reason = req.signal.reason as StepAbort | undefined;
      if (reason instanceof StepAbort && reason.kind === 'suspend') void this.suspendChild(stream);
      else void this.cancelChild(stream, reason?.message ?? 'Parent step aborted');
    };
    req.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const outcome = await settled;
      return childOutcome(def.id, outcome);
    } finally {
      req.signal.removeEventListener('abort', onAbort);
    }
  }

  private async suspendChild(stream: string): Promise<void> {
    const child = await this.host.load(this.kind, stream).catch(() => undefined);
    if (!child) return;
    this.dispatch(child, (snap) => {
      const c = snap.context;
      if (snap.value !== 'running') return [];
      return externalSuspendEvent(c, this.definitions.get(c.workflowId), 'Parent execution suspended') ?? [];
    });
  }

  /** Cancels every unfinished child execution of `executionId` (its parent was cancelled while suspended). */
  async cancelChildrenOf(executionId: string, reason: string): Promise<void> {
    for (const { stream } of await this.log.listStreams(`${executionStream(executionId)}/`)) await this.cancelChild(stream, reason);
  }

  private async cancelChild(stream: string, reason: string): Promise<void> {
    const child = await this.host.load(this.kind, stream).catch(() => undefined);
    if (!child) return;
    this.dispatch(child, (snap) => cancelEvents(snap, reason, this.definitions.get(snap.context.workflowId)));
  }

  /**
   * Boot-time recovery (docs/api-reference.md "Restart and recovery"): each `running` execution continues from its last
   * committed top-level step; a run whose workflow is gone becomes `error`.
   */
  async recover(executionIds: readonly string[]): Promise<number> {
    let recovered = 0;
    for (const id of executionIds) {
      const stream = executionStream(id);
      let actor: ExecActor;
      try {
        actor = await this.host.load(this.kind, stream);
      } catch (err) {
        this.logger.error({ err, executionId: id }, 'cannot recover workflow execution');
        continue;
      }
      if (actor.snapshot.value !== 'running') continue;
      const c = actor.snapshot.context;
      if (!this.definitions.has(c.workflowId)) {
        this.dispatch(actor, this.engineFailure(c, `Workflow ${c.workflowId} is no longer registered`));
        continue;
      }
      recovered++;
      this.dispatch(actor, (snap) => {
        const s = snap.context;
        if (snap.value !== 'running') return [];
        return { type: 'execution.recovered', resumeStepIndex: s.current ? s.current.index : s.nextIndex, input: s.input, workflowName: s.workflowName };
      });
    }
    return recovered;
  }

  /**
   * After an event store outage: continues the `running` executions whose actor is gone (a refused
   * append dropped it) or idle, as boot recovery does; an execution whose step still runs in this
   * process goes on by itself (its outcome is appended when the step ends).
   */
  async resumeAfterOutage(executionIds: readonly string[]): Promise<number> {
    if (this.stopping) return 0;
    const idle = executionIds.filter((id) => {
      const live = this.host.peek<WorkflowExecutionMachine>(executionStream(id));
      return !(live && !live.poisoned && live.scratch.step);
    });
    return this.recover(idle);
  }

  /**
   * Graceful stop: no new step starts; in-flight steps finish and are recorded (a failure is not: it
   * may be the stop's doing, the step runs again after the restart); runs stay `running`.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    // a waiting step ends unrecorded: after the restart it waits again for its recorded due time
    this.waits.stop();
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /** Whether the code of the execution's step in flight runs in this process (for the attempt in flight). */
  stepRunning(actor: ExecActor): boolean {
    const scratch = actor.scratch.step as StepScratch | undefined;
    return scratch !== undefined && scratch.attempt === actor.snapshot.context.current?.attempt;
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  /**
   * After `stop` began: the executions this process leaves unfinished (a step still running, or the
   * next step held back by the stop). They stay `running` in the log and the next start recovers them.
   */
  leftForRecovery(): string[] {
    return [...new Set([...this.stepsInFlight.keys(), ...this.heldByStop])].sort();
  }
}

/** The events that cancel an execution as it is now: the step in flight, then the run. */
export function cancelEvents(snap: ExecSnapshot, reason: string, def: WorkflowDefinition | undefined): ExecutionEvent[] {
  const status = statusOf(snap);
  if (status !== 'running' && status !== 'suspended') return [];
  const c = snap.context;
  const events: ExecutionEvent[] = [];
  if (status === 'running' && c.current) {
    const step = def?.steps[c.current.index];
    events.push({
      type: 'step.cancelled',
      stepIndex: c.current.index,
      stepId: c.current.stepId,
      stepName: step?.name ?? c.current.stepId,
      stepType: step?.type ?? 'andThen',
      input: c.current.input,
      attempt: c.current.attempt,
      reason,
    });
  }
  events.push({ type: 'execution.cancelled', reason, workflowName: c.workflowName });
  return events;
}

/** Turns a child's settling record (or its already-settled snapshot) into the parent step's result. */
function childOutcome(workflowId: string, outcome: LogRecord | ExecSnapshot): unknown {
  if ('stream' in outcome) {
    const d = outcome.data as Record<string, any>;
    switch (outcome.type) {
      case 'execution.completed':
        return d.result;
      case 'execution.suspended':
        throw new SuspendSignal(d.reason, d.suspendData);
      case 'execution.failed':
        throw new SubWorkflowFailedError(d.error?.message ?? `Sub-workflow ${workflowId} failed`);
      default:
        throw new Error(`Sub-workflow ${workflowId} was cancelled`);
    }
  }
  const c = outcome.context;
  switch (statusOf(outcome)) {
    case 'completed':
      return c.result;
    case 'suspended':
      throw new SuspendSignal(c.suspension!.reason, c.suspension!.suspendData);
    case 'error':
      throw new SubWorkflowFailedError(c.error?.message ?? `Sub-workflow ${workflowId} failed`);
    default:
      throw new Error(`Sub-workflow ${workflowId} was cancelled`);
  }
}
