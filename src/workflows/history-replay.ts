/**
 * Offline replay of a recorded execution against the current workflow code, writing to no log
 * (`eventloom replay`). The recorded stream is walked record by record beside a fresh snapshot of
 * the execution machine built from the *current* definition; the engine's own decisions
 * (decide.ts) say what the current code would record next, and the first record where they differ
 * is the divergence: a step that is new, gone, renamed or moved, a step input, a branch taken the
 * other way, a suspend or resume point that no longer fits, a run that ends differently.
 *
 * Step functions are effects: in the default mode each step is fed its recorded outcome (an
 * andWhen's condition is still evaluated, since that is workflow code deciding the path). With
 * `live`, step functions run again on their recorded inputs and their outcomes are compared with
 * the recorded ones (agent and sub-workflow steps stay fed: they are other streams' effects).
 * Commands that came from outside (suspend, resume, cancel, crash recovery) are applied as
 * recorded, after checking they still fit the current code. A failed attempt the recording
 * retried (`step.retrying`) is replayed from its record, retryAt included (its jitter was drawn
 * once, when it was recorded); the current code must still have an attempt left for it.
 */
import pino, { type Logger } from 'pino';
import {
  WORKFLOW_EXECUTION_KIND,
  WORKFLOW_EXECUTION_VERSION,
  workflowExecutionMachine,
  statusAfterRecord,
  type ExecutionEvent,
  type ExecutionInput,
  type ReplaySeed,
  type StepState,
} from '../../machines/workflow-execution.machine.js';
import { pureInitialTransition, pureTransition } from '../runtime/pure-transition.js';
import type { LogRecord } from '../log/types.js';
import { nextStepEvent, outcomeEvent, stepEnv } from './decide.js';
import { runTopLevelStep, SuspendSignal, type StepOutcome } from './step-runner.js';
import { resumeSchemaOf } from './commands.js';
import { resolveReplayPoint } from './replay-point.js';
import { diffValues, sameValue } from './value-diff.js';
import { executionIdOf } from './events.js';
import type { WorkflowDefinition, WorkflowStep } from './types.js';
import { kindOf } from './steps/registry.js';
import { someStep } from './steps/walk.js';

export { collectDefinitions } from './steps/walk.js';

type DivergenceKind =
  | 'machine-version'
  | 'workflow-missing'
  | 'input'
  | 'step-new'
  | 'step-gone'
  | 'step-renamed'
  | 'step-order'
  | 'step-input'
  | 'branch'
  | 'suspend-point'
  | 'resume-data'
  | 'outcome'
  | 'output'
  | 'result'
  | 'record-rejected';

interface Divergence {
  kind: DivergenceKind;
  /** the step concerned, named as the recording has it (the current code's id when it is new) */
  stepId?: string;
  stepIndex?: number;
  /** the recorded record at which the current code departs */
  streamSeq: number;
  message: string;
  expected: unknown;
  actual: unknown;
  /** where expected and actual values differ (`path: recorded → actual`) */
  differences?: string[];
}

export interface ExecutionReplayReport {
  executionId: string;
  workflowId: string;
  /** status the recording ends in */
  recordedStatus: string;
  result: 'identical' | 'diverged';
  /** step outcomes compared */
  steps: number;
  /** live mode: steps whose recorded outcome was fed instead of re-run (agent and sub-workflow steps) */
  fed: string[];
  /** the first divergence */
  divergence?: Divergence;
  /** live mode: every step that ended the same way with another output, workflowState, suspension data or error (the walk goes on past them) */
  valueDifferences?: Divergence[];
}

export interface HistoryReplayOptions {
  /** every workflow definition of the current config, sub-workflows included, by id */
  definitions: ReadonlyMap<string, WorkflowDefinition>;
  /** re-run step functions and compare their outcomes instead of feeding recorded ones */
  live?: boolean;
  /** live mode: a step that takes longer is a divergence (default 30 s) */
  stepTimeoutMs?: number;
  logger?: Logger;
}

type Snapshot = ReturnType<typeof pureInitialTransition<typeof workflowExecutionMachine>>[0];
type RecordedOutcomeType = 'step.completed' | 'step.skipped' | 'execution.suspended' | 'execution.failed' | 'step.retrying';

const CURRENT_KIND = `${WORKFLOW_EXECUTION_KIND}@${WORKFLOW_EXECUTION_VERSION}`;
const EXTERNAL = new Set(['execution.suspended', 'execution.resumed', 'execution.cancelled', 'step.cancelled', 'execution.recovered']);

class Diverged extends Error {
  constructor(readonly divergence: Divergence) {
    super(divergence.message);
  }
}

const diverge = (d: Divergence): never => {
  throw new Diverged(d);
};

const eventOf = (r: LogRecord) => ({ ...(r.data as object), type: r.type }) as ExecutionEvent & Record<string, any>;

/** The recorded outcome of a step attempt as the step runner would have returned it. */
function recordedOutcome(r: LogRecord): StepOutcome {
  const d = r.data as Record<string, any>;
  switch (r.type as RecordedOutcomeType) {
    case 'step.completed':
      return { kind: 'completed', output: d.output, ...(d.workflowState ? { workflowState: d.workflowState } : {}), ...(d.usage ? { usage: d.usage } : {}) };
    case 'step.skipped':
      return { kind: 'skipped' };
    case 'execution.suspended':
      return { kind: 'suspended', reason: d.reason, ...(d.suspendData !== undefined ? { suspendData: d.suspendData } : {}), ...(d.workflowState ? { workflowState: d.workflowState } : {}) };
    case 'execution.failed':
    case 'step.retrying':
      return { kind: 'failed', error: d.error };
  }
}

/** Whether `r` is the recorded outcome of the step attempt `attempt`. */
function isOutcomeOf(r: LogRecord | undefined, attempt: number): boolean {
  if (!r) return false;
  const d = r.data as { attempt?: number };
  return (r.type === 'step.completed' || r.type === 'step.skipped' || r.type === 'execution.suspended' || r.type === 'execution.failed' || r.type === 'step.retrying') && d.attempt === attempt;
}

const describeOutcome = (o: StepOutcome) => (o.kind === 'completed' ? 'ran' : o.kind === 'skipped' ? 'skipped' : o.kind === 'suspended' ? `suspended (${o.reason})` : `failed (${o.error.message})`);

/** Steps whose effect lives in another stream (their kind says so, or a nested step's does): live mode feeds them. */
function hasForeignEffect(step: WorkflowStep): boolean {
  return someStep(step, (s) => kindOf(s).replay?.foreignEffect === true);
}

export async function replayExecutionHistory(records: readonly LogRecord[], options: HistoryReplayOptions): Promise<ExecutionReplayReport> {
  const first = records[0];
  if (!first || first.type !== 'execution.started') throw new Error('an execution stream starts with execution.started');
  const started = first.data as ExecutionInput;
  const report: ExecutionReplayReport = {
    executionId: executionIdOf(first.stream),
    workflowId: started.workflowId,
    recordedStatus: recordedStatus(records),
    result: 'identical',
    steps: 0,
    fed: [],
  };
  try {
    await new Walk(records, options, report).run();
  } catch (err) {
    if (!(err instanceof Diverged)) throw err;
    report.result = 'diverged';
    // a structural divergence ends the walk; value differences found before it stay the first
    report.divergence ??= err.divergence;
    if (report.divergence !== err.divergence) report.valueDifferences!.push(err.divergence);
  }
  return report;
}

function recordedStatus(records: readonly LogRecord[]): string {
  let status = 'running';
  for (const r of records) status = statusAfterRecord(r.type) ?? status;
  return status;
}

class Walk {
  private snap!: Snapshot;
  private def!: WorkflowDefinition;
  private readonly started: ExecutionInput;
  private readonly logger: Logger;

  constructor(
    private readonly records: readonly LogRecord[],
    private readonly options: HistoryReplayOptions,
    private readonly report: ExecutionReplayReport,
  ) {
    this.started = records[0].data as ExecutionInput;
    this.logger = options.logger ?? pino({ level: 'silent' });
  }

  async run(): Promise<void> {
    this.begin();
    for (let i = 1; i < this.records.length; i++) {
      const r = this.records[i];
      const ev = eventOf(r);
      if (r.type === 'step.event') continue; // a step's custom events are its effect's output, not decisions
      if (r.type === 'step.started') {
        i = await this.step(i);
        continue;
      }
      if (r.type === 'execution.completed' || (r.type === 'execution.failed' && ev.attempt === undefined)) {
        this.decided(r);
        continue;
      }
      if (EXTERNAL.has(r.type)) {
        this.external(r);
        continue;
      }
      this.apply(ev, r, 'record-rejected');
    }
  }

  /** The machine's first snapshot, built from the current definition and the recorded start. */
  private begin(): void {
    const first = this.records[0];
    const s = this.started;
    if (first.kind && first.kind !== CURRENT_KIND) {
      diverge({ kind: 'machine-version', streamSeq: 1, message: `recorded by ${first.kind}; this build runs ${CURRENT_KIND}`, expected: first.kind, actual: CURRENT_KIND });
    }
    const def = this.options.definitions.get(s.workflowId);
    if (!def) return diverge({ kind: 'workflow-missing', streamSeq: 1, message: `workflow '${s.workflowId}' is not in the current config`, expected: s.workflowId, actual: null });
    this.def = def;
    if (def.input) {
      const parsed = def.input.safeParse(s.input);
      if (!parsed.success) {
        diverge({
          kind: 'input',
          streamSeq: 1,
          message: `the recorded input no longer passes the workflow's input schema: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
          expected: s.input,
          actual: parsed.error.issues,
        });
      } else if (!sameValue(s.input, parsed.data)) {
        diverge({
          kind: 'input',
          streamSeq: 1,
          message: `the workflow's input schema now turns the recorded input into another value`,
          expected: s.input,
          actual: parsed.data,
          differences: diffValues(s.input, parsed.data),
        });
      }
    }
    const stepIds = def.steps.map((st) => st.id);
    const input: ExecutionInput = { ...s, stepIds, ...(s.replay ? { replay: this.seedFor(s.replay, stepIds) } : {}) };
    [this.snap] = pureInitialTransition(workflowExecutionMachine, input);
  }

  /** A recorded replay seed with its step indexes taken from the current definition. */
  private seedFor(seed: ReplaySeed, stepIds: string[]): ReplaySeed {
    const indexOf = (id: string) => {
      const k = stepIds.indexOf(id);
      if (k < 0) diverge({ kind: 'step-gone', stepId: id, streamSeq: 1, message: `step '${id}' (restored by this replay run) is gone from the current code`, expected: id, actual: stepIds });
      return k;
    };
    const steps: Record<string, StepState> = {};
    for (const [id, st] of Object.entries(seed.steps)) steps[id] = { ...st, index: indexOf(id) };
    // the replay was asked from `fromStepId`, maybe a nested step (or path): it started at the top-level step holding it
    const point = resolveReplayPoint(this.def, seed.fromStepId);
    if (!point.ok) {
      diverge({
        kind: 'step-gone',
        stepId: seed.fromStepId,
        streamSeq: 1,
        message: `step '${seed.fromStepId}' (where this replay run starts) is ${point.reason === 'ambiguous' ? 'ambiguous' : 'gone'} in the current code`,
        expected: seed.fromStepId,
        actual: stepIds,
      });
    }
    const startIndex = point.ok ? point.point.topIndex : -1;
    // every step before the start must be one the replay restored: a new one there would never run
    const missing = stepIds.slice(0, startIndex).find((id) => !(id in steps));
    if (missing !== undefined) {
      diverge({
        kind: 'step-new',
        stepId: missing,
        stepIndex: stepIds.indexOf(missing),
        streamSeq: 1,
        message: `step '${missing}' is new: the current code has it before '${seed.fromStepId}', where this replay run starts, and no recorded output for it`,
        expected: Object.keys(seed.steps),
        actual: stepIds.slice(0, startIndex),
      });
    }
    return { ...seed, startIndex, steps };
  }

  private apply(ev: ExecutionEvent, r: LogRecord, kind: DivergenceKind, stepId?: string): void {
    const snap = this.snap as unknown as { can(e: unknown): boolean; value: unknown };
    if (!snap.can(ev)) {
      diverge({
        kind,
        stepId,
        streamSeq: r.streamSeq,
        message: `the recorded ${r.type} does not fit the current code's run (state ${JSON.stringify(snap.value)})`,
        expected: eventOf(r),
        actual: null,
      });
    }
    [this.snap] = pureTransition(workflowExecutionMachine, this.snap, ev);
  }

  /** Compares the current code's next decision with a recorded completion or engine-decided failure. */
  private decided(r: LogRecord): void {
    const actual = nextStepEvent(this.def, this.snap.context, undefined, { retryDue: true })!;
    const rec = eventOf(r);
    if (actual.type === 'step.started') {
      diverge({
        kind: 'step-new',
        stepId: actual.stepId,
        stepIndex: actual.stepIndex,
        streamSeq: r.streamSeq,
        message: `step '${actual.stepId}' is new: the current code runs it at index ${actual.stepIndex}, where the recording ${r.type === 'execution.completed' ? 'completed' : 'failed'} the run`,
        expected: rec,
        actual,
      });
    }
    if (actual.type !== rec.type) {
      diverge({
        kind: 'outcome',
        streamSeq: r.streamSeq,
        message: `the recording ${r.type === 'execution.failed' ? `failed (${rec.error?.message})` : 'completed'} where the current code records ${actual.type}`,
        expected: rec,
        actual,
      });
    }
    if (actual.type === 'execution.completed' && !sameValue(rec.result, actual.result)) {
      diverge({
        kind: 'result',
        streamSeq: r.streamSeq,
        message: 'the run completes with another result',
        expected: rec.result,
        actual: actual.result,
        differences: diffValues(rec.result, actual.result),
      });
    }
    this.apply(actual, r, 'record-rejected');
  }

  /** A command from outside: it must still name the step the current code is at, with valid data. */
  private external(r: LogRecord): void {
    const ev = eventOf(r);
    const steps = this.def.steps;
    if (typeof ev.stepIndex === 'number' && steps[ev.stepIndex]?.id !== ev.stepId) {
      diverge({
        kind: 'suspend-point',
        stepId: ev.stepId,
        stepIndex: ev.stepIndex,
        streamSeq: r.streamSeq,
        message: `the recorded ${r.type} at step '${ev.stepId}' (index ${ev.stepIndex}) finds ${steps[ev.stepIndex] ? `step '${steps[ev.stepIndex].id}'` : 'no step'} there in the current code`,
        expected: ev.stepId,
        actual: steps[ev.stepIndex]?.id ?? null,
      });
    }
    // a sub-workflow's resume comes through its parent's step unchecked (the API checks the parent's schema only)
    if (r.type === 'execution.resumed' && !this.started.parentExecutionId) {
      const schema = resumeSchemaOf(this.def, steps[ev.stepIndex]);
      const parsed = schema?.safeParse(ev.resumeData);
      if (parsed && !parsed.success) {
        diverge({
          kind: 'resume-data',
          stepId: ev.stepId,
          stepIndex: ev.stepIndex,
          streamSeq: r.streamSeq,
          message: `the recorded resume data of step '${ev.stepId}' no longer passes its resume schema: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
          expected: ev.resumeData,
          actual: parsed.error.issues,
        });
      }
    }
    this.apply(ev, r, r.type === 'execution.suspended' || r.type === 'execution.resumed' ? 'suspend-point' : 'record-rejected', ev.stepId);
  }

  /** A recorded step start at records[i], and its outcome when the recording has one; returns the last index consumed. */
  private async step(i: number): Promise<number> {
    const r = this.records[i];
    const rec = eventOf(r) as Extract<ExecutionEvent, { type: 'step.started' }>;
    // a step started after its retry's record: the recording says the retry's time had come
    const actual = nextStepEvent(this.def, this.snap.context, undefined, { retryDue: true })!;
    this.compareStart(r, rec, actual);
    this.apply(actual, r, 'record-rejected', rec.stepId);
    let j = i + 1;
    while (j < this.records.length && this.records[j].type === 'step.event') j++;
    const o = this.records[j];
    if (!isOutcomeOf(o, rec.attempt)) return i; // interrupted (suspend, cancel, crash): nothing to compare
    const step = this.def.steps[rec.stepIndex];
    const cur = this.snap.context.current!;
    const expected = recordedOutcome(o);
    const got = await this.outcome(step, expected);
    this.report.steps++;
    this.compareOutcome(o, step, expected, got);
    if (o.type === 'step.retrying') {
      this.compareRetry(o, step);
      // replayed as recorded: its retryAt (and jitter) were decided once, when it was written
      this.apply(eventOf(o), o, 'record-rejected', step.id);
      return j;
    }
    // the recorded outcome is what the recording continues from (equal to the current one by now)
    this.apply(outcomeEvent(this.snap.context.workflowName, step, cur, expected), o, 'record-rejected', step.id);
    return j;
  }

  /** A recorded retry: the current code's step must still have an attempt after the one that failed. */
  private compareRetry(o: LogRecord, step: WorkflowStep): void {
    const d = o.data as { stepIndex: number; stepAttempt?: number; error?: { message?: string } };
    const failed = d.stepAttempt ?? 1;
    if (step.retry && failed < step.retry.attempts) return;
    diverge({
      kind: 'outcome',
      stepId: step.id,
      stepIndex: d.stepIndex,
      streamSeq: o.streamSeq,
      message: `the recording retries step '${step.id}' after its attempt ${failed} failed (${d.error?.message}); the current code ${step.retry ? `allows ${step.retry.attempts} attempt(s)` : 'has no retry policy'} and fails the run`,
      expected: { retry: { attemptsAtLeast: failed + 1 } },
      actual: step.retry ? { retry: { attempts: step.retry.attempts } } : null,
    });
  }

  private compareStart(r: LogRecord, rec: Extract<ExecutionEvent, { type: 'step.started' }>, actual: ExecutionEvent): void {
    const at = { streamSeq: r.streamSeq, stepId: rec.stepId, stepIndex: rec.stepIndex };
    if (actual.type !== 'step.started') {
      diverge({
        ...at,
        kind: 'step-gone',
        message: `step '${rec.stepId}' (index ${rec.stepIndex}) is gone: the current code ${actual.type === 'execution.completed' ? `completes the run after ${this.def.steps.length} step(s)` : `records ${actual.type}`} instead`,
        expected: rec,
        actual,
      });
      return;
    }
    const current = this.def.steps.map((s) => s.id);
    const recorded = this.started.stepIds;
    if (actual.stepId !== rec.stepId) {
      const laterInCurrent = current.indexOf(rec.stepId) > actual.stepIndex;
      const inRecorded = recorded.includes(actual.stepId);
      if (laterInCurrent && !inRecorded) {
        diverge({
          ...at,
          kind: 'step-new',
          stepId: actual.stepId,
          stepIndex: actual.stepIndex,
          message: `step '${actual.stepId}' is new: the current code runs it at index ${actual.stepIndex}, before the recorded '${rec.stepId}'`,
          expected: rec.stepId,
          actual: actual.stepId,
        });
      }
      if (!current.includes(rec.stepId) && inRecorded) {
        diverge({
          ...at,
          kind: 'step-gone',
          message: `step '${rec.stepId}' (index ${rec.stepIndex}) is gone: the current code runs '${actual.stepId}' there`,
          expected: rec.stepId,
          actual: actual.stepId,
        });
      }
      if (!current.includes(rec.stepId)) {
        diverge({
          ...at,
          kind: 'step-renamed',
          message: `step ${rec.stepIndex} was '${rec.stepId}' when recorded and is '${actual.stepId}' in the current code (renamed or replaced)`,
          expected: rec.stepId,
          actual: actual.stepId,
        });
      }
      diverge({
        ...at,
        kind: 'step-order',
        message: `the recording runs '${rec.stepId}' at index ${rec.stepIndex}; the current code runs '${actual.stepId}' there (steps reordered)`,
        expected: rec.stepId,
        actual: actual.stepId,
      });
    }
    if (!sameValue(rec.input, actual.input)) {
      diverge({ ...at, kind: 'step-input', message: `step '${rec.stepId}' gets another input`, expected: rec.input, actual: actual.input, differences: diffValues(rec.input, actual.input) });
    }
  }

  /** The current code's outcome of the step in flight: fed (the path its kind decides, e.g. andWhen's condition, evaluated) or, live, re-run. */
  private async outcome(step: WorkflowStep, expected: StepOutcome): Promise<StepOutcome> {
    const live = this.options.live && !hasForeignEffect(step);
    if (this.options.live && !live) this.report.fed.push(step.id);
    const feed = kindOf(step).replay?.feed;
    if (!live && !feed) return expected;
    const target: WorkflowStep = live ? step : feedStep(step, expected);
    const controller = new AbortController();
    const env = stepEnv(this.def, this.snap.context, {
      signal: controller.signal,
      logger: () => this.logger,
      emit: async () => undefined,
      agentRunner: () => undefined,
      runChild: () => Promise.reject(new Error('sub-workflows are fed their recorded result in replay')),
    });
    const timeoutMs = this.options.stepTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<StepOutcome>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new Error('replay step timeout'));
        resolve({ kind: 'failed', error: { message: `did not finish within ${timeoutMs} ms in replay`, name: 'Error', stepId: step.id } });
      }, timeoutMs);
    });
    try {
      const got = await Promise.race([runTopLevelStep(target, env), timeout]);
      // fed: only the path the condition took is the current code's; the rest is the recording
      return !live && got.kind === expected.kind ? expected : got;
    } finally {
      clearTimeout(timer);
      controller.abort(new Error('replay step done'));
    }
  }

  /**
   * A step that ended the same way with other values (live mode). The run's path is unchanged, so
   * the walk goes on from the recorded outcome and every such step is reported, not only the first.
   */
  private valueDiffers(d: Divergence): void {
    this.report.valueDifferences ??= [];
    this.report.valueDifferences.push(d);
    this.report.result = 'diverged';
    this.report.divergence ??= d;
  }

  private compareOutcome(o: LogRecord, step: WorkflowStep, expected: StepOutcome, got: StepOutcome): void {
    const at = { streamSeq: o.streamSeq, stepId: step.id, stepIndex: (o.data as { stepIndex: number }).stepIndex };
    if (expected.kind !== got.kind) {
      // a kind that decides its path in replay (a branch condition) took it the other way
      const branch = kindOf(step).replay?.feed !== undefined && (expected.kind === 'skipped' || got.kind === 'skipped');
      const suspend = expected.kind === 'suspended' || got.kind === 'suspended';
      diverge({
        ...at,
        kind: branch ? 'branch' : suspend ? 'suspend-point' : 'outcome',
        message: branch
          ? `the branch condition of '${step.id}' now ${got.kind === 'skipped' ? 'skips the step' : 'runs the step'}; the recording ${describeOutcome(expected)}`
          : `step '${step.id}' ${describeOutcome(got)} where the recording ${describeOutcome(expected)}`,
        expected: expected.kind,
        actual: got.kind,
      });
    }
    if (expected.kind === 'completed' && got.kind === 'completed') {
      if (!sameValue(expected.output, got.output ?? null)) {
        this.valueDiffers({
          ...at,
          kind: 'output',
          message: `step '${step.id}' returns another output`,
          expected: expected.output,
          actual: got.output,
          differences: diffValues(expected.output, got.output ?? null),
        });
      }
      if (!sameValue(expected.workflowState, got.workflowState)) {
        this.valueDiffers({
          ...at,
          kind: 'output',
          message: `step '${step.id}' leaves another workflowState`,
          expected: expected.workflowState,
          actual: got.workflowState,
          differences: diffValues(expected.workflowState, got.workflowState),
        });
      }
    }
    if (expected.kind === 'suspended' && got.kind === 'suspended' && (expected.reason !== got.reason || !sameValue(expected.suspendData, got.suspendData))) {
      this.valueDiffers({
        ...at,
        kind: 'suspend-point',
        message: `step '${step.id}' suspends with another reason or data`,
        expected: { reason: expected.reason, suspendData: expected.suspendData },
        actual: { reason: got.reason, suspendData: got.suspendData },
      });
    }
    if (expected.kind === 'failed' && got.kind === 'failed' && expected.error.message !== got.error.message) {
      this.valueDiffers({ ...at, kind: 'outcome', message: `step '${step.id}' fails with another error`, expected: expected.error.message, actual: got.error.message });
    }
  }
}

/** `step` as fed replay runs it: its kind's path-deciding code, with the recorded outcome in place of its effect. */
function feedStep(step: WorkflowStep, recorded: StepOutcome): WorkflowStep {
  return kindOf(step).replay!.feed!(step, (inner) => fedStep(inner, recorded));
}

/** A step standing in for `inner` that returns (or suspends, or fails with) the recorded outcome. */
function fedStep(inner: WorkflowStep, recorded: StepOutcome): WorkflowStep {
  return {
    id: inner.id,
    type: 'andThen',
    retries: 0,
    execute: () => {
      if (recorded.kind === 'completed') return recorded.output ?? null;
      if (recorded.kind === 'suspended') throw new SuspendSignal(recorded.reason, recorded.suspendData);
      if (recorded.kind === 'failed') throw Object.assign(new Error(recorded.error.message), { name: recorded.error.name ?? 'Error' });
      // the recording skipped this branch; the current condition runs it: any output shows the difference
      return null;
    },
  };
}
