/**
 * The MCP server at `/mcp` with the official `@modelcontextprotocol/sdk` client over Streamable
 * HTTP, against the real server running the example config (the `assistant` agent with its
 * `getWeather` tool on the offline demo model, the `echo` and `order-approval` workflows): listing,
 * and calling a tool, an agent (continuing its conversation) and workflows (one completes, one
 * suspends and is resumed the way its result says), plus errors and JWT protection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { assistantAgent } from '../../examples/agents/assistant.js';
import { echoWorkflow, orderApprovalWorkflow } from '../../examples/workflows/index.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

const config = { agents: [assistantAgent], workflows: [echoWorkflow, orderApprovalWorkflow] };
let t: TestServer;
let client: Client;

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const c = new Client({ name: 'eventloom-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return c;
}

beforeAll(async () => {
  t = await startTestServer(config);
  client = await connect(t.url);
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe('MCP server', () => {
  it('lists the configured tool, each agent and each workflow with their input schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual(['getWeather', 'issueRefund', 'agent_assistant', 'workflow_echo', 'workflow_order-approval']);
    const byName = new Map(tools.map((x) => [x.name, x]));
    expect(byName.get('getWeather')!.inputSchema).toMatchObject({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
    expect(byName.get('agent_assistant')!.inputSchema).toMatchObject({ type: 'object', required: ['prompt'] });
    expect(byName.get('workflow_order-approval')!.inputSchema).toMatchObject({ type: 'object', properties: { items: { type: 'array' } } });
    expect(client.getServerVersion()?.name).toBe('eventloom');
  });

  it('calls a tool and answers with its result, recorded like POST /tools/:name/execute', async () => {
    const r = await client.callTool({ name: 'getWeather', arguments: { city: 'Paris' } });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ result: { city: 'Paris', tempC: 21 } });
    expect(JSON.parse((r.content as Array<{ text: string }>)[0].text)).toEqual({ result: { city: 'Paris', tempC: 21 } });
  });

  it('calls an agent with a prompt, and continues its conversation when given the conversation id', async () => {
    const first = await client.callTool({ name: 'agent_assistant', arguments: { prompt: 'Hello, I am Ada' } });
    expect(first.isError).toBeFalsy();
    const out = first.structuredContent as { text: string; conversationId: string; runId: string };
    expect(out.text.length).toBeGreaterThan(0);
    expect((first.content as Array<{ text: string }>)[0].text).toBe(out.text);
    const second = await client.callTool({ name: 'agent_assistant', arguments: { prompt: 'What is the weather in Oslo?', conversationId: out.conversationId } });
    expect((second.structuredContent as { conversationId: string }).conversationId).toBe(out.conversationId);
    expect((second.structuredContent as { text: string }).text).toContain('Oslo');
    const history = (await api(`${t.url}/agents/assistant/history`)).body.data.entries;
    expect(history[1]).toMatchObject({ id: out.runId, status: 'completed', input: 'Hello, I am Ada', conversationId: out.conversationId });
    const messages = await api(`${t.url}/api/memory/conversations/${out.conversationId}/messages?agentId=assistant`);
    expect(messages.status).toBe(200);
    expect(messages.body.data.messages.filter((m: { role: string }) => m.role === 'user')).toHaveLength(2);
  });

  it('runs a workflow to completion and returns its result', async () => {
    const r = await client.callTool({ name: 'workflow_echo', arguments: { text: 'hi there' } });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ status: 'completed', result: { text: 'hi there' } });
  });

  it('returns a suspended workflow with its suspension and how to resume it, and the resume works', async () => {
    const r = await client.callTool({ name: 'workflow_order-approval', arguments: { items: [{ price: 60, qty: 2 }] } });
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as {
      status: string;
      executionId: string;
      suspension: { stepId: string; suspendData: unknown };
      resume: { method: string; path: string; resumeDataSchema: Record<string, unknown> };
    };
    expect(out.status).toBe('suspended');
    expect(out.suspension).toMatchObject({ reason: 'manager approval', suspendData: { total: 120 } });
    expect(out.resume).toMatchObject({
      method: 'POST',
      path: `/workflows/order-approval/executions/${out.executionId}/resume`,
      resumeDataSchema: { type: 'object', properties: { approved: { type: 'boolean' } } },
    });
    const resumed = await api(`${t.url}${out.resume.path}`, { method: 'POST', json: { resumeData: { approved: true } } });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect(resumed.body.data).toMatchObject({ status: 'completed', result: { total: 120 } });
  });

  it('reports bad arguments as a tool error the caller can read, and an unknown tool as a protocol error', async () => {
    const bad = await client.callTool({ name: 'workflow_echo', arguments: { text: 42 } });
    expect(bad.isError).toBe(true);
    expect((bad.content as Array<{ text: string }>)[0].text).toMatch(/text/);
    const noPrompt = await client.callTool({ name: 'agent_assistant', arguments: {} });
    expect(noPrompt.isError).toBe(true);
    expect((noPrompt.content as Array<{ text: string }>)[0].text).toBe('Invalid arguments: prompt: must be a non-empty string');
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Tool nope not found/);
  });

  it('answers GET /mcp with 405: the server is stateless and has no server-initiated stream', async () => {
    const r = await api(`${t.url}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect(r.body).toEqual({ success: false, error: 'Method not allowed: this MCP server is stateless and sends no server-initiated messages; POST requests to /mcp' });
  });

  it('answers a body that is not a JSON-RPC message with a 400 naming the problem', async () => {
    const r = await api(`${t.url}/mcp`, { method: 'POST', json: { hello: 'world' } });
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
    expect(r.body.error).toMatch(/^Invalid MCP request: /);
  });

  it('serves a request whose X-Forwarded-Proto makes no URL of its origin', async () => {
    const r = await api(`${t.url}/mcp`, { method: 'POST', headers: { 'x-forwarded-proto': '' }, json: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } });
    expect(r.status).toBe(200);
    expect(r.body.result.tools.map((x: { name: string }) => x.name)).toContain('getWeather');
  });
});

describe('MCP server with JWT auth', () => {
  const secret = 'mcp-test-secret-with-enough-length';
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...config, auth: { secret } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('refuses a client without a token and serves one with a token, running tools as its user', async () => {
    await expect(connect(s.url)).rejects.toThrow(/401|Authentication required/);
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setIssuedAt().sign(new TextEncoder().encode(secret));
    const c = await connect(s.url, { authorization: `Bearer ${token}` });
    try {
      const r = await c.callTool({ name: 'agent_assistant', arguments: { prompt: 'hello' } });
      expect(r.isError).toBeFalsy();
      const entry = (await api(`${s.url}/agents/assistant/history`)).body.data.entries[0];
      expect(entry).toMatchObject({ userId: 'alice', input: 'hello' });
    } finally {
      await c.close();
    }
  });
});
