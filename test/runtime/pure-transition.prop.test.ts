/**
 * The direct transition path of pure-transition.ts against xstate's interpreter: for random event
 * sequences (accepted, rejected, stale, after the end) on the workflow-execution and agent-run
 * machines and a small counter, both paths agree on every step: accepted or not, state value,
 * status, context (and its key order), output and the actions handed to the effect runner.
 * Snapshots the direct path builds must also be ones xstate can go on from.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { assign, setup, type AnyStateMachine } from 'xstate';
import { workflowExecutionMachine, type ExecutionInput } from '../../machines/workflow-execution.machine.js';
import { agentRunMachine, type AgentRunStarted } from '../../machines/agent-run.machine.js';
import { hasDirectPath, pureDecide, pureInitialTransition } from '../../src/runtime/pure-transition.js';

const counter = setup({
  types: { context: {} as { total: number }, events: {} as { type: 'add'; n: number } | { type: 'close' } | { type: 'noop' }, input: {} as { start: number } },
  actions: { double: () => undefined, enter: () => undefined, leave: () => undefined, closing: () => undefined },
  guards: { positive: ({ event }) => (event as { n?: number }).n !== undefined && (event as { n: number }).n > 0 },
}).createMachine({
  id: 'counter',
  context: ({ input }) => ({ total: input.start }),
  initial: 'open',
  states: {
    open: {
      entry: { type: 'enter' },
      exit: 'leave',
      on: {
        add: [{ guard: 'positive', actions: [assign({ total: ({ context, event }) => context.total + (event as { n: number }).n }), { type: 'double' }] }, { actions: 'double' }],
        noop: {},
        close: { target: 'closed', actions: ['closing', assign({ total: ({ context }) => -context.total })] },
      },
    },
    closed: { type: 'final', entry: 'enter' },
  },
});

type Snap = { value: unknown; status: string; context: unknown; output: unknown };
type Ev = { type: string; [k: string]: unknown };

const view = (r: [unknown, Array<{ type: string; params?: unknown }>] | undefined) => {
  if (!r) return undefined;
  const s = r[0] as Snap;
  return {
    value: s.value,
    status: s.status,
    context: s.context,
    contextKeys: Object.keys((s.context as object) ?? {}),
    output: s.output,
    actions: r[1].map((a) => ({ type: a.type, params: a.params })),
  };
};

/** Runs the events through both paths side by side and compares every step. */
function agree(logic: AnyStateMachine, input: unknown, events: Ev[]): void {
  const direct = pureInitialTransition(logic, input);
  const generic = pureInitialTransition(logic, input, { direct: false });
  expect(view(direct)).toEqual(view(generic));
  let d = direct[0];
  let g = generic[0];
  for (const e of events) {
    const rd = pureDecide(logic, d as never, e);
    const rg = pureDecide(logic, g as never, e, { direct: false });
    expect(view(rd)).toEqual(view(rg));
    // xstate itself going on from the direct snapshot decides the same
    expect(view(pureDecide(logic, d as never, e, { direct: false }))).toEqual(view(rg));
    expect((d as unknown as { can(e: Ev): boolean }).can(e)).toBe(rg !== undefined);
    if (rd) d = rd[0];
    if (rg) g = rg[0];
  }
}

const execInput = (n: number): ExecutionInput => ({
  executionId: 'x',
  workflowId: 'w',
  workflowName: 'W',
  stepIds: Array.from({ length: n }, (_, i) => `s${i}`),
  input: { a: 1 },
  context: {},
  workflowState: {},
  metadata: {},
  createdAt: 1,
});

/** Workflow events with indices, ids and attempts near the plausible ones, so many are accepted. */
const execEvent = (n: number): fc.Arbitrary<Ev> => {
  const index = fc.integer({ min: 0, max: n });
  const attempt = fc.integer({ min: 1, max: 6 });
  const stepId = fc.oneof(
    index.map((i) => `s${i}`),
    fc.constant('zz'),
  );
  const step = fc.record({ stepIndex: index, stepId, stepName: fc.constant('n'), stepType: fc.constant('andThen'), input: fc.integer(), attempt });
  return fc.oneof(
    { weight: 4, arbitrary: step.map((s) => ({ type: 'step.started', ...s })) },
    { weight: 4, arbitrary: step.map((s) => ({ type: 'step.completed', ...s, output: s.input + 1 })) },
    step.map((s) => ({ type: 'step.skipped', ...s })),
    step.map((s) => ({ type: 'step.cancelled', ...s, reason: 'r' })),
    fc.record({ stepId, attempt }).map((s) => ({ type: 'step.event', ...s, event: { type: 'custom' } })),
    fc
      .record({ stepIndex: index, stepId, attempt: fc.option(attempt, { nil: undefined }) })
      .map((s) => ({ type: 'execution.suspended', stepName: 'n', stepType: 'andThen', input: 0, reason: 'wait', workflowName: 'W', ...s })),
    fc.record({ stepIndex: index, stepId }).map((s) => ({ type: 'execution.resumed', ...s, resumeData: { ok: true }, input: 0, workflowName: 'W' })),
    index.map((i) => ({ type: 'execution.recovered', resumeStepIndex: i, input: 0, workflowName: 'W' })),
    { weight: 2, arbitrary: fc.constant({ type: 'execution.completed', result: 'done', workflowName: 'W' }) },
    fc.option(attempt, { nil: undefined }).map((a) => ({ type: 'execution.failed', error: { message: 'boom' }, ...(a === undefined ? {} : { attempt: a }), workflowName: 'W' })),
    fc.constant({ type: 'execution.cancelled', reason: 'stop', workflowName: 'W' }),
    fc.constant({ type: 'unknown.event' }),
  );
};

describe('the direct transition path', () => {
  it('serves the workflow-execution and agent-run machines (and falls back to xstate for others)', () => {
    expect(hasDirectPath(workflowExecutionMachine)).toBe(true);
    expect(hasDirectPath(agentRunMachine)).toBe(true);
    expect(hasDirectPath(counter)).toBe(true);
    const nested = setup({}).createMachine({ initial: 'a', states: { a: { initial: 'b', states: { b: {} } } } });
    expect(hasDirectPath(nested)).toBe(false);
    const eventless = setup({}).createMachine({ initial: 'a', states: { a: { always: 'b' }, b: {} } });
    expect(hasDirectPath(eventless)).toBe(false);
  });

  it('decides every workflow-execution event exactly as xstate does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 }).chain((n) => fc.tuple(fc.constant(n), fc.array(execEvent(n), { maxLength: 40 }))),
        ([n, events]) => agree(workflowExecutionMachine, execInput(n), events),
      ),
      { numRuns: 300 },
    );
  });

  it('decides the common path of an execution (start, complete, finish) exactly as xstate does', () => {
    const steps = (i: number) => ({ stepIndex: i, stepId: `s${i}`, stepName: 'n', stepType: 'andThen', input: i, attempt: i + 1 });
    agree(workflowExecutionMachine, execInput(2), [
      { type: 'step.started', ...steps(0) },
      { type: 'step.completed', ...steps(0), output: 1 },
      { type: 'step.started', ...steps(1) },
      { type: 'step.completed', ...steps(1), output: 2, workflowState: { k: 1 } },
      { type: 'execution.completed', result: 2, workflowName: 'W' },
      { type: 'step.started', ...steps(0) },
    ]);
  });

  it('decides every agent-run event exactly as xstate does', () => {
    const started: AgentRunStarted = { runId: 'r', agentId: 'a', operationType: 'text', input: 'hi', options: {}, model: 'demo' };
    const ev: fc.Arbitrary<Ev> = fc.oneof(
      fc.constant({ type: 'run.text-delta', step: 0, text: 't' }),
      fc.constant({ type: 'run.step', step: { stepNumber: 0 } }),
      fc.constant({ type: 'run.finished', steps: [], text: 'ok', usage: {}, finishReason: 'stop' }),
      fc.constant({ type: 'run.failed', error: 'x' }),
      fc.constant({ type: 'run.aborted', reason: 'x' }),
      fc.constant({ type: 'run.other' }),
    );
    fc.assert(
      fc.property(fc.array(ev, { maxLength: 12 }), (events) => agree(agentRunMachine, started, events)),
      { numRuns: 200 },
    );
  });

  it('runs guards in order, exit, transition and entry actions, and rejects forbidden transitions, as xstate does', () => {
    const ev: fc.Arbitrary<Ev> = fc.oneof(
      fc.integer({ min: -2, max: 3 }).map((n) => ({ type: 'add', n })),
      fc.constant({ type: 'noop' }),
      fc.constant({ type: 'close' }),
      fc.constant({ type: 'xstate.init' }),
    );
    fc.assert(
      fc.property(fc.integer(), fc.array(ev, { maxLength: 10 }), (start, events) => agree(counter, { start }, events)),
      { numRuns: 200 },
    );
  });
});
