/**
 * MCP servers end to end: the real server (default assembly) starts a real MCP server over stdio
 * (test/fixtures/mcp/stdio-server.ts, the SDK's server side) from its `mcpServers` config and
 * connects to another one over streamable HTTP (node:http in this process); one server that exits
 * at once and one that never answers stay listed with their error and do not stop the boot. Checks
 * the `/mcp/servers*` routes, the MCP tools in `/tools` and their direct execution, an agent whose
 * (mock) model calls an MCP tool, and that stopping the server ends the stdio child.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockLanguageModelV3 } from 'ai/test';
import type { LanguageModelV3CallOptions, LanguageModelV3Content } from '@ai-sdk/provider';
import { z } from 'zod';
import { createAgent } from '../../src/agents/define-agent.js';
import { createTool } from '../../src/kernel/define-tool.js';
import type { McpModule } from '../../src/mcp/module.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { startHttpMcpServer, type HttpMcpServer } from '../fixtures/mcp/http-server.js';

const FIXTURE = path.resolve(import.meta.dirname, '..', 'fixtures', 'mcp', 'stdio-server.ts');
const usage = { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } };

/** Calls `math_add` {a: 2, b: 3} first, then answers with the tool's text output. */
function addingModel() {
  const answer = (o: LanguageModelV3CallOptions): LanguageModelV3Content[] => {
    const last = o.prompt.at(-1)!;
    const part = last.role === 'tool' ? last.content[0] : undefined;
    const out = part?.type === 'tool-result' ? part.output : undefined;
    const value = out && 'value' in out ? (out.value as { content?: Array<{ text?: string }> }) : undefined;
    return [{ type: 'text', text: `The sum is ${value?.content?.[0]?.text ?? '?'}.` }];
  };
  return new MockLanguageModelV3({
    doGenerate: async (o) =>
      o.prompt.at(-1)?.role === 'tool'
        ? { content: answer(o), finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
        : {
            content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'math_add', input: JSON.stringify({ a: 2, b: 3 }) }],
            finishReason: { unified: 'tool-calls', raw: 'tool-calls' },
            usage,
            warnings: [],
          },
  });
}

/** Records the tool names each call offers to the model. */
const offered: string[][] = [];
const recordingModel = new MockLanguageModelV3({
  doGenerate: async (o) => {
    offered.push((o.tools ?? []).map((x) => x.name));
    return { content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  },
});
const localTool = createTool({ name: 'local', description: 'A local tool', parameters: z.object({}), execute: () => 'local' });

let t: TestServer;
let http: HttpMcpServer;
let tmp: string;
const url = (p: string) => `${t.url}${p}`;
const exec = (name: string, json: unknown) => api(url(`/tools/${name}/execute`), { method: 'POST', json });

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'eventloom-mcp-'));
  http = await startHttpMcpServer();
  t = await startTestServer({
    agents: [
      createAgent({ id: 'calc', name: 'Calculator', instructions: 'Use the math tools.', model: addingModel(), mcpServers: ['math'] }),
      createAgent({ id: 'plain', name: 'Plain', instructions: 'No tools.' }),
      createAgent({ id: 'dyn', name: 'Dynamic', instructions: () => ({ instructions: 'Dynamic.', tools: [localTool] }), model: recordingModel, mcpServers: ['remote'] }),
    ],
    mcpServers: {
      math: {
        command: process.execPath,
        args: ['--import', 'tsx', FIXTURE],
        env: { FIXTURE_GREETING: 'hello from env', FIXTURE_PID_FILE: path.join(tmp, 'math.pid') },
        description: 'Arithmetic over stdio',
        connectTimeoutMs: 20_000,
      },
      remote: { url: http.url, headers: { 'x-fixture-key': 'k-123' }, name: 'Remote math', toolPrefix: false },
      broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] },
      silent: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], connectTimeoutMs: 500 },
    },
  });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await http?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('GET /mcp/servers', () => {
  it('lists every configured server in config order, failed ones with their error', async () => {
    const r = await api(url('/mcp/servers'));
    expect(r.status).toBe(200);
    const servers = r.body.data.servers;
    expect(servers.map((s: { id: string }) => s.id)).toEqual(['math', 'remote', 'broken', 'silent']);
    expect(servers[0]).toEqual({
      id: 'math',
      name: 'math-fixture',
      version: '1.2.3',
      description: 'Arithmetic over stdio',
      protocols: { stdio: true, sse: false, http: false },
      capabilities: { logging: true, prompts: false, resources: false, elicitation: false },
      status: 'connected',
    });
    expect(servers[1]).toMatchObject({ id: 'remote', name: 'Remote math', version: '2.0.0', protocols: { stdio: false, sse: false, http: true }, status: 'connected' });
    expect(servers[2]).toMatchObject({ id: 'broken', name: 'broken', version: '0.0.0', status: 'error', error: expect.stringMatching(/^Failed to connect: /) });
    expect(servers[3]).toMatchObject({ id: 'silent', status: 'error', error: 'Failed to connect: did not answer within 500 ms' });
  });

  it('shows one server, and 404 for an unknown id', async () => {
    expect((await api(url('/mcp/servers/remote'))).body.data).toMatchObject({ id: 'remote', status: 'connected' });
    expect(await api(url('/mcp/servers/nope'))).toMatchObject({ status: 404, body: { success: false, error: "MCP server 'nope' not found" } });
  });

  it("lists a server's tools by eventloom name with the server's own definition", async () => {
    const r = await api(url('/mcp/servers/math/tools'));
    expect(r.status).toBe(200);
    expect(r.body.data.server).toMatchObject({ id: 'math', status: 'connected' });
    expect(r.body.data.tools.map((x: { name: string }) => x.name)).toEqual(['math_add', 'math_shout', 'math_greet', 'math_fail', 'math_sleep']);
    expect(r.body.data.tools[0]).toEqual({
      name: 'math_add',
      type: 'tool',
      definition: {
        name: 'add',
        description: 'Adds two numbers',
        inputSchema: expect.objectContaining({
          type: 'object',
          properties: { a: { type: 'number', description: 'first addend' }, b: { type: 'number', description: 'second addend' } },
          required: ['a', 'b'],
        }),
      },
    });
    expect((await api(url('/mcp/servers/remote/tools'))).body.data.tools.map((x: { name: string }) => x.name)).toEqual(['add', 'shout', 'greet', 'fail', 'sleep']);
    expect((await api(url('/mcp/servers/broken/tools'))).body.data).toMatchObject({ server: { status: 'error' }, tools: [] });
    expect(await api(url('/mcp/servers/nope/tools'))).toMatchObject({ status: 404, body: { error: "MCP server 'nope' not found" } });
  });
});

describe('MCP tools as eventloom tools', () => {
  it('lists them in /tools with their JSON Schema and the agents that opted in', async () => {
    const r = await api(url('/tools'));
    const byName = Object.fromEntries(r.body.data.map((x: { name: string }) => [x.name, x]));
    expect(r.body.data.map((x: { name: string }) => x.name)).toEqual(['math_add', 'math_shout', 'math_greet', 'math_fail', 'math_sleep', 'add', 'shout', 'greet', 'fail', 'sleep']);
    expect(byName.math_add).toMatchObject({
      name: 'math_add',
      description: 'Adds two numbers',
      status: 'ready',
      agents: [{ id: 'calc', name: 'Calculator' }],
      tags: ['mcp', 'mcp:math'],
      parameters: { type: 'object', properties: { a: { type: 'number', description: 'first addend' }, b: { type: 'number' } }, required: ['a', 'b'] },
    });
    expect(byName.add.agents).toEqual([{ id: 'dyn', name: 'Dynamic' }]);
  });

  it('executes a stdio MCP tool directly and returns the MCP result', async () => {
    const r = await exec('math_add', { input: { a: 2, b: 40 } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ toolName: 'math_add', result: { content: [{ type: 'text', text: '42' }], structuredContent: { sum: 42 } } });
    expect((await exec('math_shout', { input: { text: 'quiet' } })).body.data.result).toEqual({ content: [{ type: 'text', text: 'QUIET' }] });
  });

  it('starts the stdio server with the configured environment', async () => {
    expect((await exec('math_greet', {})).body.data.result.content[0].text).toBe('hello from env');
  });

  it('executes a streamable-HTTP MCP tool and sends the configured headers', async () => {
    const r = await exec('add', { input: { a: 1, b: 1 } });
    expect(r.body.data.result).toMatchObject({ structuredContent: { sum: 2 } });
    expect(http.headers.length).toBeGreaterThan(0);
    expect(http.headers.every((h) => h['x-fixture-key'] === 'k-123')).toBe(true);
  });

  it('validates input against the MCP input schema before calling the server', async () => {
    const r = await exec('math_add', { input: { a: 'two' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/^Invalid tool input: a: .+; b: .+/);
  });

  it('answers 500 with the text of an MCP error result', async () => {
    expect(await exec('math_fail', {})).toMatchObject({ status: 500, body: { success: false, error: 'the fixture tool failed on purpose' } });
    expect(await exec('fail', {})).toMatchObject({ status: 500, body: { error: 'the fixture tool failed on purpose' } });
  });

  it('cancels the MCP request when the client goes away', async () => {
    const ac = new AbortController();
    const started = Date.now();
    const pending = fetch(url('/tools/math_sleep/execute'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { ms: 20_000 } }),
      signal: ac.signal,
    }).catch((e: Error) => e.name);
    setTimeout(() => ac.abort(), 300);
    expect(await pending).toBe('AbortError');
    let failed: unknown;
    while (!failed && Date.now() - started < 10_000) {
      for (const s of await t.server.log.listStreams('tool:')) {
        const recs = await t.server.log.readStream(s.stream);
        if ((recs[0].data as { toolName: string }).toolName === 'math_sleep' && recs[1]?.type === 'tool.failed') failed = recs[1].data;
      }
      if (!failed) await new Promise((r) => setTimeout(r, 20));
    }
    expect(failed).toMatchObject({ message: expect.stringMatching(/abort/i) });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('an agent with mcpServers', () => {
  it('shows the MCP tools on the agent, and only on agents that opted in', async () => {
    expect((await api(url('/agents/calc'))).body.data.tools).toEqual(['math_add', 'math_shout', 'math_greet', 'math_fail', 'math_sleep']);
    const list = (await api(url('/agents'))).body.data;
    expect(list.find((a: { id: string }) => a.id === 'calc').tools[0]).toMatchObject({ name: 'math_add', parameters: { type: 'object' } });
    expect(list.find((a: { id: string }) => a.id === 'plain').tools).toEqual([]);
  });

  it('lets its model call an MCP tool; the result comes back in toolResults', async () => {
    const r = await api(url('/agents/calc/text'), { method: 'POST', json: { input: 'What is 2 + 3?' } });
    expect(r.status).toBe(200);
    expect(r.body.data.toolCalls).toEqual([{ type: 'tool-call', toolCallId: 'call-1', toolName: 'math_add', input: { a: 2, b: 3 } }]);
    expect(r.body.data.toolResults).toEqual([
      { type: 'tool-result', toolCallId: 'call-1', toolName: 'math_add', input: { a: 2, b: 3 }, output: { content: [{ type: 'text', text: '5' }], structuredContent: { sum: 5 } } },
    ]);
    expect(r.body.data.text).toBe('The sum is 5.');
  });

  it('keeps its MCP tools next to the tools its dynamic instructions choose', async () => {
    offered.length = 0;
    const r = await api(url('/agents/dyn/text'), { method: 'POST', json: { input: 'hi' } });
    expect(r.status).toBe(200);
    expect(offered).toEqual([['local', 'add', 'shout', 'greet', 'fail', 'sleep']]);
  });
});

describe('shutdown', () => {
  it('closes the clients and ends the stdio server process', async () => {
    const pid = Number(readFileSync(path.join(tmp, 'math.pid'), 'utf8'));
    expect(() => process.kill(pid, 0)).not.toThrow();
    const mcp = t.server.modules.get('mcp') as McpModule;
    await t.server.close();
    expect(mcp.connections.get('math')!.status).toBe('closed');
    let alive = true;
    for (let i = 0; i < 100 && alive; i++) {
      try {
        process.kill(pid, 0);
        await new Promise((r) => setTimeout(r, 50));
      } catch {
        alive = false;
      }
    }
    expect(alive).toBe(false);
  });
});

describe('configuration mistakes', () => {
  it('refuses to start when an agent names an MCP server that is not configured', async () => {
    await expect(startTestServer({ agents: [createAgent({ id: 'a', name: 'A', instructions: 'x', mcpServers: ['ghost'] })] })).rejects.toThrow(
      "Agent a: MCP server 'ghost' is not configured in mcpServers",
    );
  });

  it('refuses an entry with both command and url', async () => {
    await expect(startTestServer({ mcpServers: { both: { command: 'x', url: 'http://127.0.0.1:1/mcp' } } })).rejects.toThrow(/config\.mcpServers\.both: give either 'command'/);
  });

  it('answers {servers: []} when none is configured', async () => {
    const s = await startTestServer({});
    try {
      expect((await api(`${s.url}/mcp/servers`)).body).toEqual({ success: true, data: { servers: [] } });
    } finally {
      await s.close();
    }
  });
});
