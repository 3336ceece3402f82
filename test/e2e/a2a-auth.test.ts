/**
 * The A2A endpoint under JWT auth, with the `@a2a-js/sdk` client: it is protected like
 * `POST /agents/:id/text`, a task runs as the token's user, and another user's task is not found.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { createAgent } from '../../src/agents/define-agent.js';
import { agentMemory } from '../../src/memory/agent-memory.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

const secret = 'a2a-test-secret-with-enough-length';
const token = (sub: string) => new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuedAt().sign(new TextEncoder().encode(secret));
const as = async (sub: string) => ({ serviceParameters: { Authorization: `Bearer ${await token(sub)}` } });
const echo = createAgent({ id: 'echo', name: 'Echo', instructions: 'Echo.', memory: agentMemory() });

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ agents: [echo], auth: { secret } });
});
afterAll(async () => {
  await t?.close();
});

const client = (): Promise<Client> => new ClientFactory().createFromUrl(t.url, '/.well-known/echo/agent-card.json');
const message = (text: string): Message => ({
  messageId: randomUUID(),
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

describe('A2A with JWT auth', () => {
  it('refuses a call without a token, as POST /agents/:id/text does', async () => {
    const raw = await api(`${t.url}/a2a/echo`, { method: 'POST', json: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } } });
    expect(raw.status).toBe(401);
    expect(raw.body).toEqual({ success: false, error: 'Authentication required' });
    const a2a = await client();
    await expect(a2a.sendMessage({ tenant: '', message: message('hi'), configuration: undefined, metadata: undefined })).rejects.toThrow(/401/);
  });

  it("runs a task as the token's user, and hides it from other users", async () => {
    const a2a = await client();
    const task = (await a2a.sendMessage({ tenant: '', message: message('hello'), configuration: undefined, metadata: undefined }, await as('alice'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const history = await api(`${t.url}/agents/echo/history`);
    expect(history.body.data.entries[0]).toMatchObject({ id: task.id, userId: 'alice', conversationId: task.contextId });
    expect((await a2a.getTask({ tenant: '', id: task.id, historyLength: undefined }, await as('alice'))).id).toBe(task.id);
    await expect(a2a.getTask({ tenant: '', id: task.id, historyLength: undefined }, await as('bob'))).rejects.toBeInstanceOf(TaskNotFoundError);
  });
});
