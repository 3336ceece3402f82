/**
 * Model-based test of the workflow-execution machine through pure `transition()`: random sequences
 * of step starts and outcomes (fresh and stale, failed attempts followed by a retry), external suspend, resume, cancel, completion,
 * recovery, engine failures, replays and rehydrations, checked against a small model of
 * the state table of docs/api-reference.md "Statuses and transitions". Illegal commands must be rejected without change,
 * and a snapshot rehydrated from the accepted events must equal the live one.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { initialTransition, transition } from 'xstate';
import {
  executionStatus,
  statusAfterRecord,
  workflowExecutionMachine,
  WORKFLOW_EXECUTION_KIND,
  WORKFLOW_EXECUTION_VERSION,
  type ExecutionEvent,
  type ExecutionInput,
} from '../../machines/workflow-execution.machine.js';
import type { LogRecord } from '../../src/log/types.js';
import { MachineVersionError, replayRecords, type ActorKind } from '../../src/runtime/actor-host.js';
import { cancelEvents, type ExecSnapshot } from '../../src/workflows/engine.js';
import { planReplay } from '../../src/workflows/replay-plan.js';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';

type Status = 'running' | 'suspended' | 'completed' | 'error' | 'cancelled';
type StepSt = 'running' | 'success' | 'skipped' | 'suspended' | 'cancelled';

interface Model {
  n: number;
  status: Status;
  nextIndex: number;
  current: { index: number; attempt: number; stepAttempt?: number } | null;
  attempts: number;
  steps: Map<number, StepSt>;
  suspendedIndex: number;
  /** a failed attempt waits for its retry: the step's next run number (only that start is accepted) */
  retryAttempt: number | null;
}

interface Real {
  snapshot: ExecSnapshot;
  input: ExecutionInput;
  accepted: ExecutionEvent[];
}

const kind: ActorKind<typeof workflowExecutionMachine> = {
  kind: WORKFLOW_EXECUTION_KIND,
  version: WORKFLOW_EXECUTION_VERSION,
  logic: workflowExecutionMachine,
  createdType: 'execution.started',
};

const ids = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);

function toRecords(real: Real): LogRecord[] {
  const all = [{ type: 'execution.started', ...real.input } as unknown as ExecutionEvent, ...real.accepted];
  return all.map(({ type, ...data }, i) => ({ seq: i + 1, stream: 'exec:x', streamSeq: i + 1, type, data, at: i, ...(i === 0 ? { kind: `${kind.kind}@${kind.version}` } : {}) }));
}

/** Decides events all-or-nothing, like the actor host; returns whether they were accepted. */
function decide(real: Real, events: ExecutionEvent[]): boolean {
  let snap = real.snapshot;
  for (const e of events) {
    if (!snap.can(e)) return false;
    const before = executionStatus(snap);
    [snap] = transition(workflowExecutionMachine, snap, e as never) as unknown as [ExecSnapshot];
    // projections fold records with statusAfterRecord: it must agree with the machine on every event
    expect(statusAfterRecord(e.type) ?? before).toBe(executionStatus(snap));
  }
  real.snapshot = snap;
  real.accepted.push(...events);
  return true;
}

const statusOf = (r: Real) => executionStatus(r.snapshot);
const stepFields = (m: Model, index: number, attempt: number) => ({ stepIndex: index, stepId: ids(m.n)[index] ?? 'none', stepName: 'n', stepType: 'andThen', input: index, attempt });

type Cmd = fc.Command<Model, Real>;

class StartStep implements Cmd {
  constructor(readonly variant: 'fresh' | 'wrong-index' | 'stale-attempt' | 'wrong-run') {}
  check = () => true;
  run(m: Model, r: Real) {
    const index = this.variant === 'wrong-index' ? m.nextIndex + 1 : m.nextIndex;
    const attempt = this.variant === 'stale-attempt' ? m.attempts : m.attempts + 1;
    // the run number a retry expects (a wrong one: another), none on a first run
    const stepAttempt = this.variant === 'wrong-run' ? (m.retryAttempt ?? 1) + 1 : (m.retryAttempt ?? undefined);
    const ok = decide(r, [{ type: 'step.started', ...stepFields(m, index, attempt), ...(stepAttempt !== undefined ? { stepAttempt } : {}) }]);
    // while a retry waits only its run may start; otherwise the run number is the engine's to choose
    const legal = (this.variant === 'fresh' || (this.variant === 'wrong-run' && m.retryAttempt === null)) && m.status === 'running' && m.current === null && m.nextIndex < m.n;
    expect(ok).toBe(legal);
    if (legal) {
      m.current = { index, attempt, ...(stepAttempt !== undefined ? { stepAttempt } : {}) };
      m.attempts = attempt;
      m.steps.set(index, 'running');
      m.retryAttempt = null;
    }
  }
  toString = () => `StartStep(${this.variant})`;
}

class FinishStep implements Cmd {
  constructor(
    readonly outcome: 'completed' | 'skipped' | 'suspended' | 'failed' | 'retrying',
    readonly stale: boolean,
  ) {}
  check = () => true;
  run(m: Model, r: Real) {
    const index = m.current?.index ?? m.nextIndex;
    const attempt = (m.current?.attempt ?? m.attempts) - (this.stale ? 1 : 0);
    const f = stepFields(m, index, attempt);
    const event: ExecutionEvent =
      this.outcome === 'completed'
        ? { type: 'step.completed', ...f, output: index * 10, workflowState: { last: index } }
        : this.outcome === 'skipped'
          ? { type: 'step.skipped', ...f }
          : this.outcome === 'suspended'
            ? { type: 'execution.suspended', ...f, reason: 'asked', suspendData: { i: index }, workflowName: 'W' }
            : this.outcome === 'retrying'
              ? { type: 'step.retrying', ...f, stepAttempt: m.current?.stepAttempt ?? 1, error: { message: 'x' }, retryAt: 5 }
              : { type: 'execution.failed', error: { message: 'x' }, attempt, workflowName: 'W' };
    const ok = decide(r, [event]);
    const legal = !this.stale && m.status === 'running' && m.current !== null;
    expect(ok).toBe(legal);
    if (!legal) return;
    const cur = m.current!;
    m.current = null;
    if (this.outcome === 'retrying') {
      m.retryAttempt = (cur.stepAttempt ?? 1) + 1;
    } else if (this.outcome === 'completed' || this.outcome === 'skipped') {
      m.nextIndex = cur.index + 1;
      m.steps.set(cur.index, this.outcome === 'completed' ? 'success' : 'skipped');
    } else if (this.outcome === 'suspended') {
      [m.status, m.suspendedIndex, m.nextIndex] = ['suspended', cur.index, cur.index];
      m.steps.set(cur.index, 'suspended');
    } else [m.status, m.retryAttempt] = ['error', null];
  }
  toString = () => `FinishStep(${this.outcome}${this.stale ? ', stale' : ''})`;
}

class ExternalSuspend implements Cmd {
  check = () => true;
  run(m: Model, r: Real) {
    const idx = m.current ? m.current.index : m.nextIndex < m.n ? m.nextIndex : undefined;
    const ok = decide(r, [{ type: 'execution.suspended', ...stepFields(m, idx ?? m.nextIndex, 0), attempt: undefined, reason: 'API request', workflowName: 'W' }]);
    const legal = m.status === 'running' && idx !== undefined; // suspend only from running
    expect(ok).toBe(legal);
    if (!legal) return;
    [m.status, m.suspendedIndex, m.nextIndex, m.current, m.retryAttempt] = ['suspended', idx, idx, null, null];
    m.steps.set(idx, 'suspended');
  }
  toString = () => 'ExternalSuspend';
}

class Resume implements Cmd {
  constructor(readonly pick: number) {}
  check = () => true;
  run(m: Model, r: Real) {
    const target = this.pick % m.n;
    const ok = decide(r, [{ type: 'execution.resumed', stepIndex: target, stepId: ids(m.n)[target], resumeData: { ok: true }, input: {}, workflowName: 'W' }]);
    const legal = m.status === 'suspended' && target <= m.suspendedIndex && m.steps.has(target); // resume only from suspended
    expect(ok).toBe(legal);
    if (legal) [m.status, m.nextIndex, m.current] = ['running', target, null];
  }
  toString = () => `Resume(${this.pick})`;
}

class Cancel implements Cmd {
  check = () => true;
  run(m: Model, r: Real) {
    const events = cancelEvents(r.snapshot, 'stop', undefined);
    const ok = events.length > 0 && decide(r, events);
    expect(ok).toBe(m.status === 'running' || m.status === 'suspended'); // cancel from running or suspended; cancelled unchanged
    if (ok) {
      if (m.current) m.steps.set(m.current.index, 'cancelled');
      [m.status, m.current] = ['cancelled', null];
    }
  }
  toString = () => 'Cancel';
}

class Complete implements Cmd {
  check = () => true;
  run(m: Model, r: Real) {
    const ok = decide(r, [{ type: 'execution.completed', result: 1, workflowName: 'W' }]);
    const legal = m.status === 'running' && m.current === null && m.nextIndex === m.n;
    expect(ok).toBe(legal);
    if (legal) m.status = 'completed';
  }
  toString = () => 'Complete';
}

class Recover implements Cmd {
  check = () => true;
  run(m: Model, r: Real) {
    const at = m.current ? m.current.index : m.nextIndex;
    const ok = decide(r, [{ type: 'execution.recovered', resumeStepIndex: at, input: {}, workflowName: 'W' }]);
    expect(ok).toBe(m.status === 'running');
    if (ok) [m.nextIndex, m.current] = [at, null];
  }
  toString = () => 'Recover';
}

class EngineFailure implements Cmd {
  check = () => true;
  run(m: Model, r: Real) {
    const ok = decide(r, [{ type: 'execution.failed', error: { message: 'Workflow W is no longer registered' }, workflowName: 'W' }]);
    expect(ok).toBe(m.status === 'running');
    if (ok) [m.status, m.current, m.retryAttempt] = ['error', null, null];
  }
  toString = () => 'EngineFailure';
}

/** Replaces the live snapshot with one rehydrated from the accepted events (a restart). */
class Rehydrate implements Cmd {
  check = () => true;
  run(_m: Model, r: Real) {
    const rebuilt = replayRecords(kind, 'exec:x', toRecords(r));
    expect(rebuilt.value).toEqual(r.snapshot.value);
    expect(rebuilt.context).toEqual(r.snapshot.context);
    r.snapshot = rebuilt;
  }
  toString = () => 'Rehydrate';
}

/** Replays from a step: allowed when every earlier step has a recorded outcome; seeds a running execution there. */
class Replay implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.status !== 'running'; // a running source is refused by the command (400)
  run(m: Model, r: Real) {
    const k = this.pick % m.n;
    const def = createWorkflow({ id: 'w' }, ...ids(m.n).map((id) => andThen({ id, execute: () => 0 })));
    const done = (j: number) => m.steps.get(j) === 'success' || m.steps.get(j) === 'skipped';
    const expectOk = Array.from({ length: k }, (_, j) => j).every(done);
    let plan;
    try {
      plan = planReplay(def, { context: r.snapshot.context, records: toRecords(r) }, { stepId: ids(m.n)[k] }, 0);
    } catch (err) {
      expect(expectOk).toBe(false);
      expect((err as Error).message).toMatch(/missing recorded output of step\(s\)/);
      return;
    }
    expect(expectOk).toBe(true);
    const [snap] = initialTransition(workflowExecutionMachine, { ...r.input, executionId: 'y', workflowState: plan.workflowState, replay: plan.seed });
    expect(snap.value).toBe('running');
    expect(snap.context.nextIndex).toBe(k);
    for (let j = 0; j < k; j++) expect(snap.context.steps[ids(m.n)[j]].status).toBe(m.steps.get(j));
  }
  toString = () => `Replay(${this.pick})`;
}

const commands = [
  fc.constantFrom('fresh', 'fresh', 'wrong-index', 'stale-attempt', 'wrong-run').map((v) => new StartStep(v)),
  fc.tuple(fc.constantFrom('completed', 'completed', 'skipped', 'suspended', 'failed', 'retrying', 'retrying'), fc.boolean()).map(([o, s]) => new FinishStep(o, s)),
  // retries: often enough that a failed attempt waiting for its retry meets the next start, right or wrong
  fc.constant(new FinishStep('retrying', false)),
  fc.constantFrom('fresh' as const, 'wrong-run' as const).map((v) => new StartStep(v)),
  fc.constant(new ExternalSuspend()),
  fc.nat(5).map((p) => new Resume(p)),
  fc.nat(5).map((p) => new Resume(p)),
  fc.constant(new Cancel()),
  fc.constant(new Complete()),
  fc.constant(new Recover()),
  fc.constant(new EngineFailure()),
  fc.constant(new Rehydrate()),
  fc.nat(5).map((p) => new Replay(p)),
];

describe('workflow-execution machine', () => {
  it('follows the model of the documented state table for any command sequence, and rehydration equals the live state', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.commands(commands, { maxCommands: 60 }), (n, cmds) => {
        const input: ExecutionInput = { executionId: 'x', workflowId: 'w', workflowName: 'W', stepIds: ids(n), input: { start: true }, context: {}, workflowState: {}, metadata: {}, createdAt: 0 };
        const [snapshot] = initialTransition(workflowExecutionMachine, input);
        const real: Real = { snapshot, input, accepted: [] };
        const model: Model = { n, status: 'running', nextIndex: 0, current: null, attempts: 0, steps: new Map(), suspendedIndex: -1, retryAttempt: null };
        fc.modelRun(
          () => ({ model, real }),
          [...cmds, new Rehydrate()].map((c) => wrap(c)),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('resumes only at or before the suspended step, also after resuming back to an earlier step', () => {
    const input: ExecutionInput = { executionId: 'x', workflowId: 'w', workflowName: 'W', stepIds: ids(3), input: {}, context: {}, workflowState: {}, metadata: {}, createdAt: 0 };
    const [snapshot] = initialTransition(workflowExecutionMachine, input);
    const real: Real = { snapshot, input, accepted: [] };
    const model: Model = { n: 3, status: 'running', nextIndex: 0, current: null, attempts: 0, steps: new Map(), suspendedIndex: -1, retryAttempt: null };
    const seq: Cmd[] = [
      new StartStep('fresh'),
      new FinishStep('completed', false),
      new StartStep('fresh'),
      new FinishStep('suspended', false),
      new Resume(0),
      new StartStep('fresh'),
      new ExternalSuspend(),
      new Resume(1),
      new Resume(0),
    ];
    for (const c of seq.map(wrap)) c.run(model, real);
    expect(statusOf(real)).toBe('running');
  });

  it('starts only the run of a step that its retry expects while a failed attempt waits for it, and a rehydration keeps the wait', () => {
    const input: ExecutionInput = { executionId: 'x', workflowId: 'w', workflowName: 'W', stepIds: ids(2), input: {}, context: {}, workflowState: {}, metadata: {}, createdAt: 0 };
    const [snapshot] = initialTransition(workflowExecutionMachine, input);
    const real: Real = { snapshot, input, accepted: [] };
    const model: Model = { n: 2, status: 'running', nextIndex: 0, current: null, attempts: 0, steps: new Map(), suspendedIndex: -1, retryAttempt: null };
    const seq: Cmd[] = [
      new StartStep('fresh'),
      new FinishStep('retrying', false),
      new StartStep('wrong-run'),
      new Rehydrate(),
      new Recover(),
      new StartStep('fresh'),
      new FinishStep('retrying', false),
      new StartStep('fresh'),
      new FinishStep('completed', false),
    ];
    for (const c of seq.map(wrap)) c.run(model, real);
    expect(real.accepted.filter((e) => e.type === 'step.started').map((e) => (e as { stepAttempt?: number }).stepAttempt ?? 1)).toEqual([1, 2, 3]);
    expect(real.snapshot.context.nextIndex).toBe(1);
  });

  it('refuses to replay a stream recorded by another machine version with a clear error', () => {
    const input: ExecutionInput = { executionId: 'x', workflowId: 'w', workflowName: 'W', stepIds: ['a'], input: {}, context: {}, workflowState: {}, metadata: {}, createdAt: 0 };
    const records = [{ seq: 1, stream: 'exec:x', streamSeq: 1, type: 'execution.started', data: input, at: 0, kind: `${WORKFLOW_EXECUTION_KIND}@0` }];
    expect(() => replayRecords(kind, 'exec:x', records)).toThrow(MachineVersionError);
    expect(() => replayRecords(kind, 'exec:x', records)).toThrow(`recorded by ${WORKFLOW_EXECUTION_KIND}@0; this server runs ${WORKFLOW_EXECUTION_KIND}@${WORKFLOW_EXECUTION_VERSION}`);
  });
});

/** Checks the invariants after every command. */
function wrap(c: Cmd): Cmd {
  return {
    check: (m) => c.check(m),
    run(m, r) {
      c.run(m, r);
      expect(statusOf(r)).toBe(m.status);
      if (m.status === 'completed' || m.status === 'error' || m.status === 'cancelled') expect(r.snapshot.status).toBe('done');
      if (m.status === 'running') {
        expect(r.snapshot.context.nextIndex).toBe(m.nextIndex);
        expect(r.snapshot.context.current?.index ?? null).toBe(m.current?.index ?? null);
      }
    },
    toString: () => c.toString(),
  };
}
