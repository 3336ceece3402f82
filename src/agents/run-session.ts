/**
 * One agent run in this process: the bridge between an `ai` SDK call and its actor (`run:<uuid>`).
 *
 * `start(executor)` creates the actor (recording `run.started`); the actor's `generate` effect calls
 * `begin`, which runs the executor (the SDK call of one operation). The executor reports through the
 * recording methods, which send events into the actor's mailbox:
 * - `textDelta`: buffered, one `run.text-delta` record per ~50 ms of streaming, never per token;
 * - `stepFinished`: a step that ends in tool calls becomes a `run.step` record at once (durable
 *   progress of a tool loop); the final step travels in `run.finished`;
 * - `finish` / `fail` / `abort`: the first terminal call wins; `done` resolves once it is durable.
 *
 * A run with memory owns its `MemoryWriter`: `start` resolves (or rejects) only after the executor
 * settled and the writer closed, i.e. after the run's memory saves are durable too. Operations answer
 * their client (response, a stream's last frame) after `start`, so nothing a client sees as
 * finished precedes the durability of what it reports.
 */
import { randomUUID } from 'node:crypto';
import type { LanguageModelUsage, StepResult, ToolSet } from 'ai';
import type { Logger } from 'pino';
import type { ActorHost, ActorKind } from '../runtime/actor-host.js';
import { runStream, type ApprovalDecision, type PendingApproval, type AgentRunEvent, type AgentRunStarted, type AgentRunUsage, type RecordedStep } from '../../machines/agent-run.machine.js';
import type { AgentRunActor, AgentRunLogic, RunEffect } from './run-kind.js';
import type { MemoryWriter } from './memory-writer.js';
import { systemClock, type Clock, type Timer } from '../kernel/clock.js';
import { AppError } from '../errors.js';
import { StoreFaultError } from '../log/store-health.js';

const DELTA_FLUSH_MS = 50;

export interface RunDeps {
  host: ActorHost;
  kind: ActorKind<AgentRunLogic>;
  sessions: Map<string, RunEffect>;
  logger: Logger;
  /** times the text-delta batching (default: the system clock) */
  clock?: Clock;
}

export function toRunUsage(u: LanguageModelUsage | undefined): AgentRunUsage {
  const prompt = u?.inputTokens ?? 0;
  const completion = u?.outputTokens ?? 0;
  return {
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: u?.totalTokens ?? prompt + completion,
    cachedInputTokens: u?.inputTokenDetails?.cacheReadTokens ?? u?.cachedInputTokens ?? 0,
    reasoningTokens: u?.outputTokenDetails?.reasoningTokens ?? u?.reasoningTokens ?? 0,
  };
}

/** The reason an aborted run records: the client's disconnect, or whatever aborted the signal. */
export function abortReason(run: AgentRun): string {
  const r: unknown = run.controller.signal.reason;
  return r instanceof Error ? r.message : typeof r === 'string' ? r : 'Aborted';
}

/**
 * Ends a run whose model call threw: recorded as aborted when the run's signal was aborted (client
 * gone, cancel), else as failed; either way the caller's answer is an EXECUTION_FAILED error.
 */
export async function endRunOnError(run: AgentRun, err: unknown): Promise<never> {
  if (run.controller.signal.aborted) {
    const reason = abortReason(run);
    await run.abort(reason);
    throw new AppError('EXECUTION_FAILED', `Generation aborted: ${reason}`);
  }
  return failRun(run, err);
}

/** Records the run as failed with `err` and throws it as the caller's EXECUTION_FAILED error. */
export async function failRun(run: AgentRun, err: unknown): Promise<never> {
  await run.fail(err);
  throw new AppError('EXECUTION_FAILED', errorMessage(err));
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

function toRecordedStep(step: StepResult<ToolSet>): RecordedStep {
  const toolCalls: RecordedStep['toolCalls'] = [];
  const toolResults: RecordedStep['toolResults'] = [];
  const toolErrors: RecordedStep['toolErrors'] = [];
  for (const part of step.content) {
    if (part.type === 'tool-call') toolCalls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
    else if (part.type === 'tool-result') toolResults.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, output: part.output });
    else if (part.type === 'tool-error') toolErrors.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, error: errorMessage(part.error) });
  }
  const s: RecordedStep = { stepNumber: step.stepNumber, text: step.text, toolCalls, toolResults, toolErrors, finishReason: step.finishReason, usage: toRunUsage(step.usage) };
  if (step.reasoningText) s.reasoning = step.reasoningText;
  return s;
}

export interface FinishData {
  steps: StepResult<ToolSet>[];
  text: string;
  output?: unknown;
  usage: AgentRunUsage;
  finishReason: string;
}

export class AgentRun implements RunEffect {
  readonly runId: string;
  readonly stream: string;
  /** aborts the SDK call (client disconnect with onDisconnect `cancel`) */
  readonly controller = new AbortController();
  private actor: AgentRunActor | undefined;
  private executor: ((run: AgentRun) => Promise<unknown>) | undefined;
  private settle: { resolve(v: unknown): void; reject(e: unknown): void } | undefined;
  private terminal: Promise<void> | undefined;
  private recordedSteps = 0;
  private delta = '';
  private deltaStep = 0;
  private deltaTimer: Timer | undefined;
  private stepNumber = 0;
  /** how the run ended (set with the terminal record), or `awaiting-approval` when it waits for a decision */
  outcome: 'completed' | 'failed' | 'cancelled' | 'awaiting-approval' | undefined;
  /** the recorded error of a failed run, the reason of an aborted one */
  failure: string | undefined;

  constructor(
    private readonly deps: RunDeps,
    readonly started: Omit<AgentRunStarted, 'runId'>,
    runId: string = randomUUID(),
    /** the run's memory saves (none without memory, a userId, or with `readOnly`) */
    readonly memory?: MemoryWriter,
  ) {
    this.runId = runId;
    this.stream = runStream(runId);
  }

  get terminated(): boolean {
    return this.terminal !== undefined;
  }

  /** Records `run.started` and runs the executor as the actor's effect; resolves with its result once its memory saves are durable. */
  start<T>(executor: (run: AgentRun) => Promise<T>): Promise<T> {
    this.executor = executor;
    const result = new Promise<T>((resolve, reject) => {
      this.settle = { resolve: resolve, reject };
    });
    this.deps.sessions.set(this.stream, this);
    const data: AgentRunStarted = { runId: this.runId, ...this.started };
    // run ids are always server-generated UUIDs (newRunId), so the stream cannot exist yet
    this.deps.host.create(this.deps.kind, this.stream, data, { freshStream: true }).catch((err: unknown) => {
      // the start record could not be written: stop the generation, report the failure
      this.deps.sessions.delete(this.stream);
      this.controller.abort(err);
      this.settle?.reject(err);
    });
    return result;
  }

  /**
   * Continues a run that waits for approvals: records `decisions` and, when they answer the last pending
   * one, runs the executor as the actor's `generate` effect (as `start` does). Resolves with null
   * when other approvals are still pending. Rejects with the host's error when the run is not
   * waiting for that approval (EventRejectedError) or does not exist.
   */
  resume<T>(decisions: ApprovalDecision[], executor: (run: AgentRun) => Promise<T>): Promise<T | null> {
    // The effect waits until the decisions are durable: the host may start it before (pipelining),
    // and on a shared store another node can record its answer to the same approval first; only the
    // node whose decisions were written runs the approved tools, the other gets the append's error.
    let written!: (err?: unknown) => void;
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- forwards the store's error as it came
    const durable = new Promise<void>((resolve, reject) => (written = (err) => (err === undefined ? resolve() : reject(err))));
    durable.catch(() => undefined);
    this.executor = (run) => durable.then(() => executor(run));
    const result = new Promise<T | null>((resolve, reject) => {
      this.settle = { resolve: resolve, reject };
    });
    this.deps.sessions.set(this.stream, this);
    const events = decisions.map((d) => {
      const event: AgentRunEvent = { type: 'run.approval-answered', approvalId: d.approvalId, approved: d.approved };
      if (d.reason !== undefined) event.reason = d.reason;
      return event;
    });
    // all decisions in one append: either every one is accepted, or none is written
    this.deps.host
      .send(this.deps.kind, this.stream, () => events)
      .then(
        (res) => {
          written();
          if (this.actor) return; // the effect began: the executor settles the result
          this.deps.sessions.delete(this.stream);
          this.settle?.resolve(res.snapshot.value === 'awaitingApproval' ? null : undefined);
        },
        (err: unknown) => {
          written(err ?? new Error('the decisions could not be recorded'));
          this.deps.sessions.delete(this.stream);
          // an effect that began settles the result with this error (it never ran the executor)
          if (this.actor) return;
          this.settle?.reject(err);
        },
      );
    return result;
  }

  /** The actor's `generate` effect. */
  begin(actor: AgentRunActor): void {
    this.actor = actor;
    const exec = this.executor!;
    let p: Promise<unknown>;
    try {
      p = exec(this);
    } catch (err) {
      p = Promise.reject(err);
    }
    // the writer's chain never rejects (a failed save is logged, not a failed generation)
    const saved = () => this.memory?.close() ?? Promise.resolve();
    p.then(
      (v) => saved().then(() => this.settle?.resolve(v)),
      (e) => saved().then(() => this.settle?.reject(e)),
    );
  }

  /** Records an event; resolves once durable, rejects (after logging) when it could not be written. */
  private send(event: AgentRunEvent): Promise<void> {
    return this.actor!.send(event).then(
      () => undefined,
      (err: unknown) => {
        // a store fault is logged once, by the store's change of state
        if (!(err instanceof StoreFaultError)) this.deps.logger.error({ err, stream: this.stream, type: event.type }, 'recording an agent run event failed');
        throw err;
      },
    );
  }

  /** Fire-and-forget recording (deltas, steps): a failure is logged and poisons the actor, the terminal record then fails too. */
  private record(event: AgentRunEvent): void {
    this.send(event).catch(() => undefined);
  }

  textDelta(text: string): void {
    if (this.terminal || text.length === 0) return;
    if (this.delta.length === 0) this.deltaStep = this.stepNumber;
    this.delta += text;
    this.deltaTimer ??= (this.deps.clock ?? systemClock).setTimer(() => this.flushDelta(), DELTA_FLUSH_MS);
  }

  private flushDelta(): void {
    this.deltaTimer = undefined;
    if (this.terminal || this.delta.length === 0) return;
    const text = this.delta;
    this.delta = '';
    this.record({ type: 'run.text-delta', step: this.deltaStep, text });
  }

  private dropDelta(): void {
    this.deltaTimer?.cancel();
    this.deltaTimer = undefined;
    this.delta = '';
  }

  /** A finished step: recorded now when the loop goes on (tool calls), else it waits for `finish`. */
  stepFinished(step: StepResult<ToolSet>): void {
    this.stepNumber = step.stepNumber + 1;
    if (this.terminal) return;
    for (const part of step.content) {
      // the SDK hands a throwing tool's error to the model; operators see it here, once per call
      if (part.type === 'tool-error') this.deps.logger.warn({ ...this.logIds(), toolCallId: part.toolCallId, toolName: part.toolName, err: part.error }, 'agent tool failed');
    }
    if (step.finishReason !== 'tool-calls' || step.toolCalls.length === 0) return;
    // the step record carries the step's whole text: pending deltas are redundant
    this.dropDelta();
    this.recordedSteps = step.stepNumber + 1;
    this.record({ type: 'run.step', step: toRecordedStep(step) });
  }

  finish(data: FinishData): Promise<void> {
    if (this.terminal) return this.terminal;
    this.dropDelta();
    const steps = data.steps.slice(this.recordedSteps).map(toRecordedStep);
    const event: AgentRunEvent = { type: 'run.finished', steps, text: data.text, usage: data.usage, finishReason: data.finishReason };
    if (data.output !== undefined) event.output = data.output;
    return this.end(event);
  }

  /**
   * The model called tools that need approval: records the pending calls and the model messages of
   * this generation (`messages`), and ends this process's part of the run; `resume` (here or on any
   * node, after any restart) continues it.
   */
  awaitApproval(approvals: PendingApproval[], messages: unknown[]): Promise<void> {
    if (this.terminal) return this.terminal;
    this.dropDelta();
    this.outcome = 'awaiting-approval';
    const waiting = this.send({ type: 'run.approval-requested', approvals, messages }).finally(() => this.deps.sessions.delete(this.stream));
    waiting.catch(() => undefined);
    this.terminal = waiting;
    return waiting;
  }

  fail(error: unknown): Promise<void> {
    if (this.terminal) return this.terminal;
    // the one log line of a failed run (the route answers with an AppError, which is not logged again)
    this.deps.logger.warn({ ...this.logIds(), err: error instanceof Error ? error : { type: 'Error', message: errorMessage(error) } }, 'agent run failed');
    return this.end({ type: 'run.failed', error: errorMessage(error) });
  }

  /** Correlation keys of this run's log lines (logger-for.ts), the calling workflow step's included. */
  private logIds(): Record<string, unknown> {
    const s = this.started;
    const m = s.metadata ?? {};
    const ids: Record<string, unknown> = { agentId: s.agentId, runId: this.runId };
    if (s.conversationId !== undefined) ids.conversationId = s.conversationId;
    if (s.userId !== undefined) ids.userId = s.userId;
    for (const k of ['workflowId', 'executionId', 'stepId', 'parentRunId'] as const) if (typeof m[k] === 'string') ids[k] = m[k];
    return ids;
  }

  abort(reason: string): Promise<void> {
    if (this.terminal) return this.terminal;
    return this.end({ type: 'run.aborted', reason });
  }

  /** Durable terminal record, or undefined while the run goes on. */
  get done(): Promise<void> | undefined {
    return this.terminal;
  }

  private end(event: AgentRunEvent): Promise<void> {
    this.dropDelta();
    this.outcome = event.type === 'run.finished' ? 'completed' : event.type === 'run.failed' ? 'failed' : 'cancelled';
    if (event.type === 'run.failed') this.failure = event.error;
    else if (event.type === 'run.aborted') this.failure = event.reason;
    // Awaiting callers see a failed write (an acknowledged run must be durable); `void` callers
    // (SDK callbacks) must not turn it into an unhandled rejection.
    const terminal = this.send(event).finally(() => this.deps.sessions.delete(this.stream));
    terminal.catch(() => undefined);
    this.terminal = terminal;
    return terminal;
  }
}
