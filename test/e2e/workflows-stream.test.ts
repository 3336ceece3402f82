/**
 * Workflow event streams on the real server with a real SSE parser: POST stream (order, payloads,
 * ids = sequences, suspension keeps it open, resumed segments, closing after workflow-result) and
 * the attach route (Last-Event-ID / fromSequence, while running, after the end, after a restart).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { collectSse, readSse, type SseFrame } from '../helpers/sse.js';
import { echoWorkflow, orderApprovalWorkflow } from '../../examples/workflows/index.js';
import { TEST_WORKFLOWS, release } from '../workflows/fixtures.js';
import { until } from '../helpers/until.js';
import type { WorkflowsModule } from '../../src/workflows/module.js';

let t: TestServer;
const post = (path: string, json: unknown = {}) => api(`${t.url}${path}`, { method: 'POST', json });
const attach = (wf: string, id: string, opts: { query?: string; lastEventId?: string } = {}) =>
  collectSse(`${t.url}/workflows/${wf}/executions/${id}/stream${opts.query ?? ''}`, { headers: opts.lastEventId !== undefined ? { 'last-event-id': opts.lastEventId } : {} });
const summary = (frames: SseFrame[]) => frames.map((f) => `${f.id}:${f.event}${f.json?.from ? `:${f.json.from}` : ''}`);

beforeAll(async () => {
  t = await startTestServer({ workflows: [echoWorkflow, orderApprovalWorkflow, ...TEST_WORKFLOWS] });
});
afterAll(async () => {
  await t.close();
});

describe('POST /workflows/:id/stream', () => {
  it('streams every event in order with id = sequence, then workflow-result, then closes', async () => {
    const res = await collectSse(`${t.url}/workflows/echo/stream`, { method: 'POST', json: { input: { text: 'hi' } } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(summary(res.frames)).toEqual(['1:workflow-start:Echo', '2:step-start:echo', '3:step-complete:echo', '4:workflow-complete:Echo', '5:workflow-result']);
    const [start, stepStart, stepDone, complete, result] = res.frames.map((f) => f.json);
    const executionId = start.executionId;
    for (const [i, f] of res.frames.entries()) {
      expect(f.json).toMatchObject({ type: f.event, executionId, sequence: i + 1, timestamp: expect.any(String) });
      expect(f.json).not.toHaveProperty('context');
    }
    expect(start).toMatchObject({ from: 'Echo', input: { text: 'hi' }, status: 'running' });
    expect(stepStart).toMatchObject({ from: 'echo', stepName: 'Echo', input: { text: 'hi' }, status: 'running', stepIndex: 0, stepType: 'andThen', metadata: { displayName: 'Step 1: Echo' } });
    expect(stepDone).toMatchObject({ from: 'echo', input: { text: 'hi' }, output: { text: 'hi' }, status: 'success', stepIndex: 0, stepType: 'andThen' });
    expect(complete).toMatchObject({ from: 'Echo', output: { text: 'hi' }, status: 'success' });
    expect(result).toMatchObject({ status: 'completed', result: { text: 'hi' }, endAt: expect.any(String) });
    expect(result).not.toHaveProperty('from');
  });

  it('answers pre-stream errors with a status and the envelope', async () => {
    expect(await post('/workflows/nope/stream', { input: {} })).toMatchObject({ status: 404, body: { success: false, error: 'Workflow nope not found' } });
    expect(await post('/workflows/echo/stream', { input: {} })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^Input validation failed: text: /) } });
  });

  it('stays open while suspended and carries the resumed segment to the end', async () => {
    const res = await fetch(`${t.url}/workflows/order-approval/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { items: [{ price: 70, qty: 2 }] } }),
    });
    const frames: SseFrame[] = [];
    let resumed: Promise<unknown> | undefined;
    for await (const f of readSse(res)) {
      frames.push(f);
      if (f.event === 'workflow-suspended') {
        expect(f.json).toMatchObject({
          from: 'approval-gate',
          stepName: 'Approval gate',
          status: 'suspended',
          stepIndex: 1,
          stepType: 'andWhen',
          input: { total: 140 },
          metadata: {
            reason: 'manager approval',
            suspendData: { total: 140 },
            suspension: { reason: 'manager approval', suspendedStepIndex: 1, stepId: 'approval-gate', suspendData: { total: 140 }, suspendedAt: expect.any(String) },
          },
        });
        resumed = post(`/workflows/order-approval/executions/${f.json.executionId}/resume`, { resumeData: { approved: true } });
      }
    }
    await resumed;
    const types = frames.map((f) => f.event);
    expect(types.slice(0, 6)).toEqual(['workflow-start', 'step-start', 'step-complete', 'step-start', 'workflow-suspended', 'workflow-start']);
    expect(frames[5].json.metadata).toEqual({ resumed: true, resumeStepIndex: 1 });
    expect(types.at(-2)).toBe('workflow-complete');
    expect(frames.at(-1)!.json).toMatchObject({ type: 'workflow-result', status: 'completed', result: { status: 'approved', total: 140 } });
    expect(frames.map((f) => Number(f.id))).toEqual(frames.map((_, i) => i + 1));
  });

  it('carries custom step events, a cancelled step and workflow-error payloads', async () => {
    const custom = await collectSse(`${t.url}/workflows/stateful/stream`, { method: 'POST', json: { input: {} } });
    expect(custom.frames.find((f) => f.event === 'progress')!.json).toMatchObject({ type: 'progress', pct: 50, from: 'count', status: 'running' });
    const failed = await collectSse(`${t.url}/workflows/failing/stream`, { method: 'POST', json: { input: { n: 1 } } });
    expect(failed.frames.at(-2)!.json).toMatchObject({ type: 'workflow-error', from: 'Failing', status: 'error', error: { message: 'boom', name: 'Error', stepId: 'explode' } });
    expect(failed.frames.at(-1)!.json).toMatchObject({ type: 'workflow-result', status: 'error', result: null, error: 'boom' });

    let id = '';
    const cancelled = collectSse(`${t.url}/workflows/gated/stream`, { method: 'POST', json: { input: { key: 'sse-cancel' } } }, (f) => {
      if (f.event === 'step-start' && f.json.from === 'wait') {
        id = f.json.executionId;
        void post(`/workflows/gated/executions/${id}/cancel`, { reason: 'enough' });
      }
      return false;
    });
    const frames = (await cancelled).frames;
    expect(frames.slice(-3).map((f) => [f.event, f.json.status])).toEqual([
      ['step-complete', 'cancelled'],
      ['workflow-cancelled', 'cancelled'],
      ['workflow-result', 'cancelled'],
    ]);
    expect(frames.at(-3)!.json.metadata).toMatchObject({ reason: 'enough' });
    expect(frames.at(-2)!.json.metadata).toEqual({ reason: 'enough' });
  });
});

describe('attach: GET /workflows/:id/executions/:executionId/stream', () => {
  it('replays an ended run from the beginning, after Last-Event-ID, or from ?fromSequence= (which wins), then closes', async () => {
    const id = (await post('/workflows/echo/execute', { input: { text: 'again' } })).body.data.executionId;
    expect(summary((await attach('echo', id)).frames)).toEqual(['1:workflow-start:Echo', '2:step-start:echo', '3:step-complete:echo', '4:workflow-complete:Echo', '5:workflow-result']);
    expect(summary((await attach('echo', id, { lastEventId: '2' })).frames)).toEqual(['3:step-complete:echo', '4:workflow-complete:Echo', '5:workflow-result']);
    expect(summary((await attach('echo', id, { lastEventId: '2', query: '?fromSequence=3' })).frames)).toEqual(['4:workflow-complete:Echo', '5:workflow-result']);
    expect(summary((await attach('echo', id, { lastEventId: '4' })).frames)).toEqual(['5:workflow-result']);
    expect(summary((await attach('echo', id, { lastEventId: 'garbage' })).frames)).toHaveLength(5);
    expect(await api(`${t.url}/workflows/echo/executions/${id}/stream?fromSequence=-1`)).toMatchObject({ status: 400, body: { error: 'Invalid request: fromSequence: must be an integer >= 0' } });
  });

  it('sends nothing more and closes when attached from the last id of an ended run (its workflow-result) or past it', async () => {
    const completed = (await post('/workflows/echo/execute', { input: { text: 'done' } })).body.data.executionId;
    const failed = (await post('/workflows/failing/execute', { input: { n: 1 } })).body.executionId;
    const failedLast = (await attach('failing', failed)).frames.at(-1)!;
    expect(failedLast.event).toBe('workflow-result');
    const cases: Array<[string, string, string]> = [
      ['echo', completed, '5'],
      ['echo', completed, '6'],
      ['echo', completed, '1126952828'],
      ['failing', failed, failedLast.id!],
    ];
    for (const [wf, id, cursor] of cases) {
      for (const opts of [{ lastEventId: cursor }, { query: `?fromSequence=${cursor}` }]) {
        const started = Date.now();
        const res = await attach(wf, id, opts);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('text/event-stream');
        expect(summary(res.frames), `${wf} from ${cursor}`).toEqual([]);
        // closed at once, not left open waiting for events that will never come
        expect(Date.now() - started).toBeLessThan(5_000);
      }
    }
    // one below the result's id: the client saw the terminal event but not the result frame
    expect(summary((await attach('failing', failed, { lastEventId: String(Number(failedLast.id) - 1) })).frames)).toEqual([`${failedLast.id}:workflow-result`]);
  });

  it('follows a running execution live after its history, with no gap and no duplicate', async () => {
    let id = '';
    const first = collectSse(`${t.url}/workflows/gated/stream`, { method: 'POST', json: { input: { key: 'attach-live' } } }, (f) => {
      if (f.event === 'step-start' && f.json.from === 'wait') id = f.json.executionId;
      return id !== '';
    });
    await first;
    const live = collectSse(`${t.url}/workflows/gated/executions/${id}/stream`, { headers: { 'last-event-id': '1' } });
    await new Promise((r) => setTimeout(r, 50));
    release('attach-live');
    const frames = (await live).frames;
    expect(summary(frames)).toEqual([
      '2:step-start:first',
      '3:step-complete:first',
      '4:step-start:wait',
      '5:step-complete:wait',
      '6:step-start:last',
      '7:step-complete:last',
      '8:workflow-complete:Gated',
      '9:workflow-result',
    ]);
  });

  it('opens at once when nothing is left to send (a suspended run attached from its last event or past it), then carries the resumed events', async () => {
    const id = (await post('/workflows/order-approval/execute', { input: { items: [{ price: 500, qty: 1 }] } })).body.data.executionId;
    for (const query of ['?fromSequence=5', '?fromSequence=1126952828']) {
      const controller = new AbortController();
      const started = Date.now();
      const res = await fetch(`${t.url}/workflows/order-approval/executions/${id}/stream${query}`, { signal: controller.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      // the head arrives with the opening comment, not with the first event hours later
      expect(Date.now() - started).toBeLessThan(2_000);
      controller.abort();
    }
    const following = collectSse(`${t.url}/workflows/order-approval/executions/${id}/stream`, { headers: { 'last-event-id': '5' } });
    await new Promise((r) => setTimeout(r, 100));
    expect((await post(`/workflows/order-approval/executions/${id}/resume`, { resumeData: { approved: true } })).status).toBe(200);
    expect((await following).frames.at(-1)?.event).toBe('workflow-result');
  });

  it('serves a crowd of readers of one execution from several cursors: each gets every event after its cursor once, readers that hang up are dropped, none stays registered', async () => {
    const id = (await post('/workflows/order-approval/execute', { input: { items: [{ price: 500, qty: 1 }] } })).body.data.executionId;
    const feeds = (t.server.modules.get('workflows') as WorkflowsModule).engine.fanout;
    const stream = `exec:${id}`;
    // 40 readers attaching at once from Last-Event-ID 0..4; the first 10 hang up once they have read the suspension (id 5)
    const readers = Array.from({ length: 40 }, (_, i) => {
      const controller = new AbortController();
      const frames: SseFrame[] = [];
      const reader = { cursor: i % 5, hangsUp: i < 10, frames, done: Promise.resolve() };
      reader.done = (async () => {
        const res = await fetch(`${t.url}/workflows/order-approval/executions/${id}/stream`, { headers: { 'last-event-id': String(reader.cursor) }, signal: controller.signal });
        for await (const f of readSse(res)) {
          frames.push(f);
          if (reader.hangsUp && f.event === 'workflow-suspended') return controller.abort();
        }
      })().catch((err: Error) => {
        if (err.name !== 'AbortError') throw err;
      });
      return reader;
    });
    await until(() => readers.every((r) => r.frames.some((f) => f.event === 'workflow-suspended')), 'every reader to read the suspension');
    await until(() => feeds.sseReaderCount(stream) === 30, 'the readers that hung up to be dropped');
    // with the crowd's records in memory the route still checks the execution against the workflow named
    expect(feeds.cachedRecord(stream, 1)?.type).toBe('execution.started');
    expect(await api(`${t.url}/workflows/echo/executions/${id}/stream`)).toMatchObject({ status: 404, body: { error: `Execution ${id} not found` } });
    expect(await api(`${t.url}/workflows/nope/executions/${id}/stream`)).toMatchObject({ status: 404, body: { error: 'Workflow nope not found' } });
    expect((await post(`/workflows/order-approval/executions/${id}/resume`, { resumeData: { approved: true } })).status).toBe(200);
    await Promise.all(readers.map((r) => r.done));
    const last = Number(readers[10].frames.at(-1)!.id);
    for (const r of readers) {
      const ids = r.frames.map((f) => Number(f.id));
      const upTo = r.hangsUp ? 5 : last;
      expect(ids).toEqual(Array.from({ length: upTo - r.cursor }, (_, k) => r.cursor + 1 + k));
      if (!r.hangsUp) expect(r.frames.at(-1)!.json).toMatchObject({ type: 'workflow-result', status: 'completed' });
    }
    expect(feeds.sseReaderCount(stream)).toBe(0);
  });

  it('resumes a stream after a server restart from the log, and a suspended run stays resumable', async () => {
    const done = (await post('/workflows/order-approval/execute', { input: { items: [{ price: 1, qty: 1 }] } })).body.data.executionId;
    const waiting = (await post('/workflows/order-approval/execute', { input: { items: [{ price: 900, qty: 1 }] } })).body.data.executionId;
    const before = (await attach('order-approval', done, { lastEventId: '3' })).frames;
    await t.restart();
    const after = (await attach('order-approval', done, { lastEventId: '3' })).frames;
    expect(after.map((f) => [f.id, f.event, f.data])).toEqual(before.map((f) => [f.id, f.event, f.data]));
    expect(after.at(-1)!.event).toBe('workflow-result');

    const stream = collectSse(`${t.url}/workflows/order-approval/executions/${waiting}/stream`, { headers: { 'last-event-id': '5' } });
    await new Promise((r) => setTimeout(r, 50));
    const resumed = await post(`/workflows/order-approval/executions/${waiting}/resume`, { resumeData: { approved: true } });
    expect(resumed.body.data).toMatchObject({ status: 'completed', result: { status: 'approved', total: 900 } });
    const frames = (await stream).frames;
    expect(frames[0]).toMatchObject({ id: '6', event: 'workflow-start' });
    expect(frames.at(-1)!.json).toMatchObject({ type: 'workflow-result', status: 'completed' });
  });
});
