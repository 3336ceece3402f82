/**
 * Workflows used by the workflow tests besides the examples: failures, retries, shared state,
 * custom events, a sub-workflow that suspends, an agent step, a blocking step released by the test.
 */
import { z } from 'zod';
import { andAgent, andAll, andRace, andTap, andThen, andWhen, andWorkflow, createWorkflow } from '../../src/workflows/builder.js';
import { sleep } from '../../examples/workflows/echo.workflow.js';
import { createAgent } from '../../src/agents/define-agent.js';

export const failing = createWorkflow(
  { id: 'failing', name: 'Failing', input: z.object({ n: z.number() }) },
  andThen({ id: 'double', execute: ({ data }) => ({ n: (data as { n: number }).n * 2 }) }),
  andThen({
    id: 'explode',
    execute: () => {
      throw new Error('boom');
    },
  }),
);

let flakyCalls = 0;
export const flaky = createWorkflow(
  { id: 'flaky', name: 'Flaky' },
  andThen({
    id: 'try',
    retries: 2,
    execute: () => {
      flakyCalls++;
      if (flakyCalls % 3 !== 0) throw new Error(`attempt ${flakyCalls} failed`);
      return { ok: true, calls: flakyCalls };
    },
  }),
);

export const stateful = createWorkflow(
  { id: 'stateful', name: 'Stateful' },
  andThen({
    id: 'count',
    execute: ({ setWorkflowState, workflowState, emit }) => {
      setWorkflowState({ ...workflowState, counted: ((workflowState.counted as number) ?? 0) + 1 });
      void emit({ type: 'progress', pct: 50 });
      return { step: 1 };
    },
  }),
  andTap({
    id: 'tap-fails',
    execute: () => {
      throw new Error('ignored tap failure');
    },
  }),
  andThen({
    id: 'read',
    execute: ({ workflowState, getInitData, getStepResult, context, userId }) => ({
      state: workflowState,
      init: getInitData(),
      first: getStepResult('count'),
      context,
      userId: userId ?? null,
    }),
  }),
);

export const child = createWorkflow(
  { id: 'child', name: 'Child', input: z.object({ v: z.number() }), resumeSchema: z.object({ add: z.number() }) },
  andThen({ id: 'inc', execute: ({ data }) => ({ v: (data as { v: number }).v + 1 }) }),
  andThen({
    id: 'ask',
    execute: ({ data, resumeData, suspend }) => {
      if (resumeData === undefined) suspend('child needs input', { v: (data as { v: number }).v });
      return { v: (data as { v: number }).v + (resumeData as { add: number }).add };
    },
  }),
);

export const parent = createWorkflow(
  { id: 'parent', name: 'Parent', input: z.object({ v: z.number() }) },
  andThen({ id: 'prep', execute: ({ data }) => ({ v: (data as { v: number }).v * 10 }) }),
  andWorkflow({ id: 'sub', workflow: child }),
  andThen({ id: 'after', execute: ({ data }) => ({ final: (data as { v: number }).v }) }),
);

export const agentStep = createWorkflow(
  { id: 'agent-step', name: 'Agent step' },
  andAgent({ id: 'ask-agent', agent: 'assistant', prompt: (d: { q: string }) => `Answer: ${d.q}`, schema: z.object({ a: z.string() }) }),
);

export const branching = createWorkflow(
  { id: 'branching', name: 'Branching', input: z.object({ go: z.boolean() }) },
  andWhen({ id: 'maybe', condition: ({ data }) => (data as { go: boolean }).go, step: andThen({ id: 'inner', execute: () => ({ went: true }) }) }),
  andAll({ id: 'both', steps: [andThen({ id: 'a', execute: () => 'A' }), andThen({ id: 'b', execute: async ({ signal }) => (await sleep(5, signal), 'B') })] }),
  andRace({
    id: 'race',
    steps: [andThen({ id: 'slow', execute: async ({ signal }) => (await sleep(2_000, signal), 'slow') }), andThen({ id: 'quick', execute: () => 'quick' })],
  }),
);

/**
 * A step that waits until the test releases it (per execution input key). A release that comes
 * before the step is reached (the run shows as running while its first step's start is still being
 * made durable) is kept, and the step then passes at once.
 */
const gates = new Map<string, () => void>();
const releasedEarly = new Set<string>();
export const release = (key: string) => {
  const open = gates.get(key);
  if (open) open();
  else releasedEarly.add(key);
  gates.delete(key);
};
export const gated = createWorkflow(
  { id: 'gated', name: 'Gated', input: z.object({ key: z.string() }) },
  andThen({ id: 'first', execute: ({ data }) => data }),
  andThen({
    id: 'wait',
    execute: ({ data, signal }) =>
      new Promise((resolve, reject) => {
        const key = (data as { key: string }).key;
        if (releasedEarly.delete(key)) return resolve({ released: key });
        gates.set(key, () => resolve({ released: key }));
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
  }),
  andThen({ id: 'last', execute: ({ data }) => ({ done: data }) }),
);

/** Suspends until two approvals were given, keeping them in workflowState across suspensions. */
export const twoApprovals = createWorkflow(
  { id: 'two-approvals', name: 'Two approvals', resumeSchema: z.object({ by: z.string() }) },
  andThen({
    id: 'collect',
    execute: ({ resumeData, workflowState, setWorkflowState, suspend }) => {
      const by = [...((workflowState.by as string[] | undefined) ?? [])];
      if (resumeData) by.push((resumeData as { by: string }).by);
      setWorkflowState({ by });
      if (by.length < 2) suspend(`need ${2 - by.length} more approval(s)`, { have: by.length });
      return { approvedBy: by };
    },
  }),
);

/** Without `agentStep`: a server with it must also configure its agent (TEST_AGENTS), or it refuses to start. */
export const TEST_WORKFLOWS = [failing, flaky, stateful, parent, branching, gated, twoApprovals];

/** The agent `agentStep` names. */
export const TEST_AGENTS = [createAgent({ id: 'assistant', name: 'Assistant', instructions: 'Answer briefly.' })];
