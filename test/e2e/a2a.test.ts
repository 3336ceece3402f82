/**
 * The A2A server with the official `@a2a-js/sdk` client against the real server (uWS, LevelDB in a
 * temp dir): discovery through the well-known card, blocking and streaming sends, tasks read back,
 * cancelled, and subscribed to, contexts continuing an agent's memory conversation, and tasks read
 * and subscribed to after a real restart on the same data dir.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { Role, TaskState, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import { TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { createAgent } from '../../src/agents/define-agent.js';
import { createDemoModel } from '../../src/agents/models/demo-model.js';
import { agentMemory } from '../../src/memory/agent-memory.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { readSse, type SseFrame } from '../helpers/sse.js';

const echo = createAgent({ id: 'echo', name: 'Echo', instructions: 'Echo.', memory: agentMemory() });
// slow enough that a cancel or a restart lands while it streams
const slow = createAgent({ id: 'slow', name: 'Slow', instructions: 'Echo slowly.', model: createDemoModel({ tokenDelayMs: 40 }) });
const longInput = Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ');

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ agents: [echo, slow], server: { shutdownTimeoutMs: 2500 } });
});
afterAll(async () => {
  await t?.close();
});

const client = (agentId: string): Promise<Client> => new ClientFactory().createFromUrl(t.url, `/.well-known/${agentId}/agent-card.json`);

function userMessage(text: string, contextId = ''): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const textOf = (parts: Part[] | undefined): string => (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

function asTask(result: Task | Message): Task {
  expect('status' in result, 'the agent answers with a task').toBe(true);
  return result as Task;
}

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

describe('A2A server', () => {
  it('is found through the well-known card and answers a message with a completed task that is the agent run in the history', async () => {
    const a2a = await client('echo');
    expect((await a2a.getAgentCard()).capabilities?.streaming).toBe(true);
    const task = asTask(await a2a.sendMessage({ tenant: '', message: userMessage('hello there'), configuration: undefined, metadata: undefined }));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const answer = textOf(task.artifacts[0]?.parts);
    expect(answer.length).toBeGreaterThan(0);
    expect(task.contextId).not.toBe('');
    const history = (await api(`${t.url}/agents/echo/history`)).body.data.entries;
    expect(history[0]).toMatchObject({ id: task.id, status: 'completed', input: 'hello there', output: answer, conversationId: task.contextId });
    // the history of the task: the caller's message, then the agent's answer
    expect(task.history.map((m) => [m.role, textOf(m.parts)])).toEqual([
      [Role.ROLE_USER, 'hello there'],
      [Role.ROLE_AGENT, answer],
    ]);
    const again = await a2a.getTask({ tenant: '', id: task.id, historyLength: 1 });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(again.history.map((m) => m.role)).toEqual([Role.ROLE_AGENT]);
  });

  it('streams a task: the task first, the answer as appended artifact chunks, then the final status', async () => {
    const a2a = await client('slow');
    const events = await collect(a2a.sendMessageStream({ tenant: '', message: userMessage(Array.from({ length: 30 }, (_, i) => `s${i}`).join(' ')), configuration: undefined, metadata: undefined }));
    expect(events[0]?.payload?.$case).toBe('task');
    const task = events[0].payload!.value as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const chunks = events.filter((e) => e.payload?.$case === 'artifactUpdate').map((e) => e.payload!.value as { append: boolean; lastChunk: boolean; artifact?: { parts: Part[] } });
    const streamed = chunks.filter((c) => !c.lastChunk);
    expect(streamed.length).toBeGreaterThan(1);
    expect(streamed.slice(1).every((c) => c.append)).toBe(true);
    const final = chunks.at(-1)!;
    expect(final.lastChunk).toBe(true);
    // the chunks are the answer as it came; the last chunk replaces them with the whole answer (the run's
    // last few words are recorded with its end, not as a chunk)
    const answer = textOf(final.artifact?.parts);
    expect(answer.endsWith('s29')).toBe(true);
    expect(answer.startsWith(streamed.map((c) => textOf(c.artifact?.parts)).join(''))).toBe(true);
    expect(final.append).toBe(false);
    const last = events.at(-1)!.payload!;
    expect(last.$case).toBe('statusUpdate');
    expect((last.value as { status?: { state: TaskState } }).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const got = await a2a.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(textOf(got.artifacts[0]?.parts)).toBe(textOf(final.artifact?.parts));
  });

  it('subscribes to a working task: the task so far, then the rest of its updates until it ends', async () => {
    const a2a = await client('slow');
    const started = asTask(
      await a2a.sendMessage({
        tenant: '',
        message: userMessage(Array.from({ length: 20 }, (_, i) => `u${i}`).join(' ')),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately: true },
        metadata: undefined,
      }),
    );
    const events = await collect(a2a.resubscribeTask({ tenant: '', id: started.id }));
    expect(events[0]?.payload?.$case).toBe('task');
    expect((events[0].payload!.value as Task).id).toBe(started.id);
    const last = events.at(-1)!.payload!;
    expect(last.$case).toBe('statusUpdate');
    expect((last.value as { status?: { state: TaskState } }).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const final = await a2a.getTask({ tenant: '', id: started.id, historyLength: undefined });
    expect(textOf(final.artifacts[0]?.parts)).toContain('u19');
  });

  it('continues the memory conversation of a context id across tasks', async () => {
    const a2a = await client('echo');
    const first = asTask(await a2a.sendMessage({ tenant: '', message: userMessage('my name is Ada'), configuration: undefined, metadata: undefined }));
    const second = asTask(await a2a.sendMessage({ tenant: '', message: userMessage('what is my name?', first.contextId), configuration: undefined, metadata: undefined }));
    expect(second.contextId).toBe(first.contextId);
    expect(second.id).not.toBe(first.id);
    const r = await api(`${t.url}/api/memory/conversations/${first.contextId}/messages?agentId=echo`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const users = (r.body.data.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user').map((m) => JSON.stringify(m.content));
    expect(users).toHaveLength(2);
    expect(users[0]).toContain('my name is Ada');
    expect(users[1]).toContain('what is my name?');
  });

  it('cancels a working task: the run is aborted and recorded, and a second cancel is refused', async () => {
    const a2a = await client('slow');
    const started = asTask(
      await a2a.sendMessage({
        tenant: '',
        message: userMessage(longInput),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately: true },
        metadata: undefined,
      }),
    );
    expect(started.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const cancelled = await a2a.cancelTask({ tenant: '', id: started.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(textOf(cancelled.status?.message?.parts)).toBe('Cancelled by the A2A client');
    expect((await a2a.getTask({ tenant: '', id: started.id, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const entry = (await api(`${t.url}/agents/slow/history`)).body.data.entries.find((e: { id: string }) => e.id === started.id);
    expect(entry).toMatchObject({ status: 'cancelled', metadata: { abortReason: 'Cancelled by the A2A client' } });
    await expect(a2a.cancelTask({ tenant: '', id: started.id, metadata: undefined })).rejects.toBeInstanceOf(TaskNotCancelableError);
  });

  it('answers unknown tasks, and tasks of another agent, with task-not-found', async () => {
    const a2a = await client('echo');
    await expect(a2a.getTask({ tenant: '', id: 'no-such-task', historyLength: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
    const slowTask = asTask(await (await client('slow')).sendMessage({ tenant: '', message: userMessage('short'), configuration: undefined, metadata: undefined }));
    await expect(a2a.getTask({ tenant: '', id: slowTask.id, historyLength: undefined })).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(collect(a2a.resubscribeTask({ tenant: '', id: 'no-such-task' }))).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('answers protocol errors with their JSON-RPC codes and an unknown agent with 404', async () => {
    const rpc = (body: unknown, agent = 'echo') => api(`${t.url}/a2a/${agent}`, { method: 'POST', json: body });
    const unknownMethod = await rpc({ jsonrpc: '2.0', id: 1, method: 'message/send', params: {} });
    expect(unknownMethod.body).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found: message/send' } });
    const noMessage = await rpc({ jsonrpc: '2.0', id: 2, method: 'SendMessage', params: {} });
    expect(noMessage.body.error.code).toBe(-32602);
    expect(noMessage.body.error.message).toMatch(/^Invalid params: message/);
    const noText = await rpc({ jsonrpc: '2.0', id: 3, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ data: { a: 1 } }] } } });
    expect(noText.body.error).toEqual({ code: -32602, message: 'Invalid params: message.parts: at least one text part is required (the agents take text)' });
    const notRpc = await rpc({ id: 4, method: 'GetTask' });
    expect(notRpc.body).toEqual({ jsonrpc: '2.0', id: 4, error: { code: -32600, message: "Invalid Request: jsonrpc must be '2.0'" } });
    const push = await rpc({ jsonrpc: '2.0', id: 5, method: 'CreateTaskPushNotificationConfig', params: {} });
    expect(push.body.error.code).toBe(-32003);
    const ghost = await rpc({ jsonrpc: '2.0', id: 6, method: 'GetTask', params: { id: 'x' } }, 'ghost');
    expect(ghost.status).toBe(404);
    expect(ghost.body).toEqual({ success: false, error: 'Agent ghost not found' });
  });

  it('answers the wire format of the README example, and streams SSE frames with event and id lines', async () => {
    const sent = await api(`${t.url}/a2a/echo`, {
      method: 'POST',
      json: { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'Hello' }] } } },
    });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { task: { status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ artifactId: 'response', parts: [{ text: expect.any(String) }] }] } },
    });
    const res = await fetch(`${t.url}/a2a/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 's', method: 'SendStreamingMessage', params: { message: { messageId: 'm2', role: 'ROLE_USER', parts: [{ text: 'Hello again' }] } } }),
    });
    const frames: SseFrame[] = [];
    for await (const f of readSse(res)) frames.push(f);
    expect(frames[0]).toMatchObject({ event: 'task', id: '1' });
    expect(frames.at(-1)).toMatchObject({ event: 'statusUpdate', id: String(frames.length) });
    expect(frames.every((f) => f.json?.jsonrpc === '2.0' && f.json?.id === 's')).toBe(true);
  });

  it('reads and subscribes to tasks after a restart: a finished task is unchanged, a task the restart interrupted shows how it ended', async () => {
    let a2a = await client('slow');
    const done = asTask(await a2a.sendMessage({ tenant: '', message: userMessage('before the restart'), configuration: undefined, metadata: undefined }));
    const events: StreamResponse[] = [];
    const reading = (async () => {
      try {
        for await (const e of a2a.sendMessageStream({ tenant: '', message: userMessage(longInput), configuration: undefined, metadata: undefined })) events.push(e);
      } catch {
        // the stream breaks when the server goes down
      }
    })();
    await until(() => events.some((e) => e.payload?.$case === 'artifactUpdate'), 'the first streamed chunk', 10_000);
    const interrupted = events[0].payload!.value as Task;
    await t.restart();
    await reading;

    a2a = await client('slow');
    const doneAfter = await a2a.getTask({ tenant: '', id: done.id, historyLength: undefined });
    expect(doneAfter).toEqual(done);
    const after = await a2a.getTask({ tenant: '', id: interrupted.id, historyLength: undefined });
    expect(after.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(textOf(after.status?.message?.parts)).toBe('Server shutting down');
    const resubscribed = await collect(a2a.resubscribeTask({ tenant: '', id: interrupted.id }));
    expect(resubscribed).toHaveLength(1);
    expect(resubscribed[0].payload?.$case).toBe('task');
    expect((resubscribed[0].payload!.value as Task).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});
