/**
 * Adding a step kind is one file plus its registration: this file is that file for a kind the
 * server does not ship (`andWaitFor`: waits for an outside event, then runs its nested step on the
 * event's payload), registered with `registerStepKind`. With no other change the real server
 * describes it, runs it, suspends and resumes it from its recorded suspension, checks its resume
 * schema, replays from its nested step, and offline replay finds its history identical.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z, type ZodType } from 'zod';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';
import { registerStepKind } from '../../src/workflows/steps/registry.js';
import { SKIPPED, type StepKind } from '../../src/workflows/steps/kind.js';
import type { StepBase, WorkflowStep } from '../../src/workflows/types.js';
import { collectDefinitions, replayExecutionHistory } from '../../src/workflows/history-replay.js';
import { executionStream } from '../../src/workflows/events.js';

// ---- the kind: its step type, builder, and behaviour ----

interface WaitForStep extends StepBase {
  type: 'andWaitFor';
  event: string;
  step: WorkflowStep;
}

declare module '../../src/workflows/types.js' {
  interface StepKinds {
    andWaitFor: WaitForStep;
  }
}

/** What the step records when it starts waiting: found again, from the record, when the execution resumes. */
interface Waiting {
  type: 'wait-for';
  stepId: string;
  event: string;
}

const EventArrived: ZodType = z.object({ payload: z.unknown() }).strict();

function andWaitFor(def: { id: string; event: string; step: WorkflowStep }): WaitForStep {
  return { ...def, type: 'andWaitFor', resumeSchema: EventArrived };
}

const waitForKind: StepKind<WaitForStep> = {
  type: 'andWaitFor',
  nest: 'waits',
  childOutput: 'whole',
  children: (step) => [step.step],
  async run(step, run) {
    const resumed = run.resumed();
    const waiting = resumed?.suspendData as Waiting | undefined;
    if (!waiting || waiting.type !== 'wait-for' || waiting.stepId !== step.id) {
      return run.suspend(`waiting for ${step.event}`, { type: 'wait-for', stepId: step.id, event: step.event } satisfies Waiting);
    }
    const { payload } = resumed!.resumeData as { payload: unknown };
    const out = await run.runNested(step.step, { data: run.data, payload }, run.signal);
    return out === SKIPPED ? run.data : out;
  },
  describe: (step, describeChild) => ({ event: step.event, subSteps: [describeChild(step.step, 0)], subStepsCount: 1 }),
};

registerStepKind(waitForKind);

// ---- a workflow using it ----

const payment = createWorkflow(
  { id: 'await-payment', input: z.object({ orderId: z.string() }) },
  andThen({ id: 'order', execute: ({ data }) => ({ orderId: data.orderId, total: 30 }) }),
  andWaitFor({
    id: 'payment',
    event: 'paid',
    step: andThen({ id: 'book', execute: ({ data }) => ({ ...data.data, paid: data.payload.amount, open: data.data.total - data.payload.amount }) }),
  }),
  andThen({ id: 'done', execute: ({ data }) => ({ ...data, status: data.open === 0 ? 'settled' : 'partly paid' }) }),
);

let t: TestServer;
const post = (path: string, json: unknown = {}) => api(`${t.url}${path}`, { method: 'POST', json });
const get = (path: string) => api(`${t.url}${path}`);

beforeAll(async () => {
  t = await startTestServer({ workflows: [payment] });
});
afterAll(async () => {
  await t.close();
});

describe('a step kind added in one file', () => {
  it('is described by its own describe, with the fields the console shows it by', async () => {
    const d = (await get('/workflows/await-payment')).body.data;
    expect(d.steps.map((s: { id: string; type: string }) => [s.id, s.type])).toEqual([
      ['order', 'andThen'],
      ['payment', 'andWaitFor'],
      ['done', 'andThen'],
    ]);
    expect(d.steps[1]).toMatchObject({ event: 'paid', nest: 'waits', childOutput: 'whole', subStepsCount: 1, subSteps: [{ id: 'book', type: 'andThen', stepIndex: 0 }] });
    expect(d.steps[1].resumeSchema).toMatchObject({ type: 'object', properties: { payload: {} } });
  });

  it('waits, checks resume data against its schema, and completes from its recorded suspension when the event arrives', async () => {
    const started = (await post('/workflows/await-payment/execute', { input: { orderId: 'o-1' } })).body.data;
    expect(started).toMatchObject({ status: 'suspended', suspension: { suspendedStepIndex: 1, suspendData: { type: 'wait-for', stepId: 'payment', event: 'paid' } } });

    const wrong = await post(`/workflows/await-payment/executions/${started.executionId}/resume`, { resumeData: { amount: 30 } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatch(/^Resume data validation failed: /);

    const done = await post(`/workflows/await-payment/executions/${started.executionId}/resume`, { resumeData: { payload: { amount: 30 } } });
    expect(done.body.data).toMatchObject({ status: 'completed', result: { orderId: 'o-1', total: 30, paid: 30, open: 0, status: 'settled' } });

    // offline replay of the recorded history against this code: identical, fed and live
    const records = await t.server.log.readStream(executionStream(started.executionId));
    const definitions = collectDefinitions([payment]);
    for (const live of [false, true]) {
      const report = await replayExecutionHistory(records, { definitions, live });
      expect(report.divergence).toBeUndefined();
      expect(report).toMatchObject({ result: 'identical', recordedStatus: 'completed', steps: 4 });
    }
  });

  it('replays from its nested step: the step holding it waits again, and completes with the new event', async () => {
    const started = (await post('/workflows/await-payment/execute', { input: { orderId: 'o-2' } })).body.data;
    await post(`/workflows/await-payment/executions/${started.executionId}/resume`, { resumeData: { payload: { amount: 30 } } });
    const replayed = (await post(`/workflows/await-payment/executions/${started.executionId}/replay`, { stepId: 'book' })).body.data;
    expect(replayed.status).toBe('suspended');
    const done = await post(`/workflows/await-payment/executions/${replayed.executionId}/resume`, { resumeData: { payload: { amount: 10 } } });
    expect(done.body.data).toMatchObject({ status: 'completed', result: { orderId: 'o-2', paid: 10, open: 20, status: 'partly paid' } });
  });

  it('refuses a second kind of the same type, and a step whose type no kind runs', () => {
    expect(() => registerStepKind(waitForKind)).toThrow("Step kind 'andWaitFor' is registered twice");
    const stray = { id: 'mystery', type: 'andMystery' } as unknown as WorkflowStep;
    expect(() => createWorkflow({ id: 'strays' }, stray)).toThrow(/Step 'mystery' has type 'andMystery', which is no registered step kind/);
  });
});
