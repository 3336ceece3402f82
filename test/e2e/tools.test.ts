/**
 * The tool routes against the real server (default assembly, LevelDB log): the listing's shape and
 * first-registration order across agents, sub-agents and config-level tools; direct execution with
 * input validation, the caller's context and user, every error case, the durable `tool:<uuid>`
 * records, and cancellation when the client goes away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { z } from 'zod';
import { createAgent } from '../../src/agents/define-agent.js';
import { createTool } from '../../src/kernel/define-tool.js';
import { TOOL_COMPLETED, TOOL_FAILED, TOOL_STARTED } from '../../src/tools/tool-runs.js';
import type { LogRecord } from '../../src/log/types.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

const multiply = createTool({
  name: 'multiply',
  description: 'Multiplies two integers',
  parameters: z.object({ a: z.number().int().describe('left factor'), b: z.number().int() }),
  execute: ({ a, b }) => a * b,
});
const pickColor = createTool({ name: 'pickColor', description: 'Asks the user for a colour (client side)', parameters: z.object({}) });
const lookup = createTool({ name: 'lookup', description: 'Looks a word up', parameters: z.object({ word: z.string() }), tags: ['search'], execute: ({ word }) => ({ word, found: true }) });
/** a second tool object named like `lookup`: never run, the first registration wins */
const lookupShadow = createTool({ name: 'lookup', description: 'shadowed', parameters: z.object({ word: z.string() }), execute: () => 'shadow' });
const whoAmI = createTool({
  name: 'whoAmI',
  description: 'Echoes what the tool sees of its caller',
  parameters: z.object({ note: z.string().optional() }),
  execute: (input, o) => ({ input, context: o.context, userId: o.userId ?? null, conversationId: o.conversationId ?? null }),
});
const explode = createTool({
  name: 'explode',
  description: 'Always throws',
  parameters: z.object({}),
  execute: () => {
    throw new Error('the tool exploded');
  },
});
const nothing = createTool({ name: 'nothing', description: 'Returns undefined', parameters: z.object({}), execute: () => undefined });
const nonJson = createTool({ name: 'nonJson', description: 'Returns a BigInt', parameters: z.object({}), execute: () => ({ n: 1n }) });
let waiting: { aborted: Promise<string> } | undefined;
const waitForAbort = createTool({
  name: 'waitForAbort',
  description: 'Resolves only when its call is cancelled',
  parameters: z.object({}),
  execute: (_input, { signal }) => {
    let report!: (reason: string) => void;
    waiting = { aborted: new Promise<string>((r) => (report = r)) };
    return new Promise((_resolve, reject) => {
      signal.addEventListener('abort', () => {
        report('aborted');
        reject(new Error('cancelled by the client'));
      });
    });
  },
});

const helper = createAgent({ id: 'helper', name: 'Helper', instructions: 'Help.', tools: [lookupShadow, whoAmI] });
const agents = [
  createAgent({ id: 'calc', name: 'Calculator', instructions: 'Compute.', tools: [multiply, pickColor, lookup] }),
  createAgent({ id: 'lead', name: 'Lead', instructions: 'Lead.', tools: [lookup], subAgents: [helper] }),
];

let t: TestServer;
const url = (p: string) => `${t.url}${p}`;
const exec = (name: string, json?: unknown, init: RequestInit = {}) => api(url(`/tools/${name}/execute`), { method: 'POST', ...(json !== undefined ? { json } : {}), ...init });

async function toolRecords(): Promise<LogRecord[][]> {
  const streams = await t.server.log.listStreams('tool:');
  return Promise.all(streams.map((s) => t.server.log.readStream(s.stream)));
}

beforeAll(async () => {
  t = await startTestServer({ agents, tools: [explode, whoAmI, nothing, nonJson, waitForAbort] });
});
afterAll(async () => {
  await t?.close();
});

describe('GET /tools', () => {
  it('lists each server-executable tool once, in first-registration order, with the agents that have it', async () => {
    const r = await api(url('/tools'));
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    const names = r.body.data.map((x: { name: string }) => x.name);
    // calc's tools, lead's, its sub-agent helper's, then config-level; pickColor has no execute
    expect(names).toEqual(['multiply', 'lookup', 'whoAmI', 'explode', 'nothing', 'nonJson', 'waitForAbort']);
    const byName = Object.fromEntries(r.body.data.map((x: { name: string }) => [x.name, x]));
    expect(byName.multiply).toEqual({
      id: 'multiply',
      name: 'multiply',
      description: 'Multiplies two integers',
      parameters: {
        type: 'object',
        properties: {
          a: { type: 'integer', description: 'left factor', minimum: expect.any(Number), maximum: expect.any(Number) },
          b: { type: 'integer', minimum: expect.any(Number), maximum: expect.any(Number) },
        },
        required: ['a', 'b'],
      },
      status: 'ready',
      agents: [{ id: 'calc', name: 'Calculator' }],
    });
    expect(byName.lookup).toMatchObject({
      description: 'Looks a word up',
      tags: ['search'],
      agents: [
        { id: 'calc', name: 'Calculator' },
        { id: 'lead', name: 'Lead' },
        { id: 'helper', name: 'Helper' },
      ],
    });
    expect(byName.whoAmI.agents).toEqual([{ id: 'helper', name: 'Helper' }]);
    expect(byName.explode.agents).toEqual([]);
    expect(byName.multiply).not.toHaveProperty('tags');
  });

  it('counts the executable tools on the landing document', async () => {
    expect((t.server.modules.get('tools') as { counts(): { tools: number } }).counts()).toEqual({ tools: 7 });
  });
});

describe('POST /tools/:name/execute', () => {
  it('runs the tool and answers toolName, result, executionTime and timestamp', async () => {
    const before = Date.now();
    const r = await exec('multiply', { input: { a: 6, b: 7 } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { toolName: 'multiply', result: 42, executionTime: expect.any(Number), timestamp: expect.any(String) } });
    expect(r.body.data.executionTime).toBeGreaterThanOrEqual(0);
    expect(Date.parse(r.body.data.timestamp)).toBeGreaterThanOrEqual(before - 1);
    expect(r.body.data.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('runs the first registered tool of a name, not a later namesake', async () => {
    const r = await exec('lookup', { input: { word: 'loom' } });
    expect(r.body.data.result).toEqual({ word: 'loom', found: true });
  });

  it('records the run durably before answering: tool.started then tool.completed', async () => {
    const r = await exec('multiply', { input: { a: 3, b: 5 }, userId: 'u-rec', conversationId: 'c-rec' });
    expect(r.status).toBe(200);
    const runs = await toolRecords();
    const run = runs.find((recs) => (recs[0].data as { userId?: string }).userId === 'u-rec')!;
    expect(run.map((x) => x.type)).toEqual([TOOL_STARTED, TOOL_COMPLETED]);
    expect(run[0].stream).toMatch(/^tool:[0-9a-f-]{36}$/);
    expect(run[0].data).toEqual({ toolName: 'multiply', input: { a: 3, b: 5 }, userId: 'u-rec', conversationId: 'c-rec' });
    expect(run[1].data).toEqual({ output: 15, durationMs: expect.any(Number) });
  });

  it('accepts an empty body: input {} and context {}', async () => {
    const r = await api(url('/tools/whoAmI/execute'), { method: 'POST' });
    expect(r.status).toBe(200);
    expect(r.body.data.result).toEqual({ input: {}, context: {}, userId: null, conversationId: null });
  });

  it('passes context, userId and conversationId; context.userId wins over the body field', async () => {
    const r = await exec('whoAmI', { input: { note: 'n' }, context: { team: 'blue', userId: 'ctx-user' }, userId: 'body-user', conversationId: 'body-conv' });
    expect(r.body.data.result).toEqual({ input: { note: 'n' }, context: { team: 'blue', userId: 'ctx-user' }, userId: 'ctx-user', conversationId: 'body-conv' });
    const r2 = await exec('whoAmI', { context: { conversationId: 'ctx-conv' }, userId: 'body-user' });
    expect(r2.body.data.result).toMatchObject({ userId: 'body-user', conversationId: 'ctx-conv' });
  });

  it('answers 404 for an unknown tool', async () => {
    expect(await exec('nope', {})).toMatchObject({ status: 404, body: { success: false, error: 'Tool nope not found' } });
  });

  it('answers 400 for a tool the server cannot execute', async () => {
    expect(await exec('pickColor', {})).toMatchObject({ status: 400, body: { success: false, error: 'Tool pickColor cannot be executed on the server' } });
  });

  it('answers 400 Invalid tool input naming the fields, and runs nothing', async () => {
    const before = (await t.server.log.listStreams('tool:')).length;
    const r = await exec('multiply', { input: { a: 1.5 } });
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
    expect(r.body.error).toMatch(/^Invalid tool input: a: .+; b: .+/);
    const r2 = await exec('multiply', { input: 'six' });
    expect(r2.body.error).toMatch(/^Invalid tool input: \(root\): /);
    expect((await t.server.log.listStreams('tool:')).length).toBe(before);
  });

  it('answers 400 Invalid request when the body has the wrong shape', async () => {
    expect(await exec('whoAmI', { context: 'x' })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^Invalid request: context: /) } });
    expect(await exec('whoAmI', { userId: 5 })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^Invalid request: userId: /) } });
    expect(await exec('whoAmI', undefined, { body: '{"input":', headers: { 'content-type': 'application/json' } })).toMatchObject({ status: 400, body: { error: 'Malformed JSON in request body' } });
  });

  it('answers 500 with the tool message when it throws, and records tool.failed', async () => {
    expect(await exec('explode', {})).toMatchObject({ status: 500, body: { success: false, error: 'the tool exploded' } });
    const run = (await toolRecords()).find((recs) => (recs[0].data as { toolName: string }).toolName === 'explode')!;
    expect(run.map((x) => x.type)).toEqual([TOOL_STARTED, TOOL_FAILED]);
    expect(run[1].data).toEqual({ message: 'the tool exploded', durationMs: expect.any(Number) });
  });

  it('answers result null when the tool returns nothing', async () => {
    expect((await exec('nothing', {})).body.data).toMatchObject({ toolName: 'nothing', result: null });
  });

  it('fails a run whose result is not JSON instead of crashing', async () => {
    const r = await exec('nonJson', {});
    expect(r.status).toBe(500);
    expect(r.body.error).toMatch(/BigInt/);
  });

  it('cancels the tool through its abort signal when the client goes away, and records the failure', async () => {
    const ac = new AbortController();
    waiting = undefined;
    const pending = fetch(url('/tools/waitForAbort/execute'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', signal: ac.signal }).catch((e: Error) => e.name);
    const current = () => waiting;
    while (!current()) await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    expect(await pending).toBe('AbortError');
    expect(await current()!.aborted).toBe('aborted');
    let run: LogRecord[] | undefined;
    for (let i = 0; i < 200 && !run; i++) {
      run = (await toolRecords()).find((recs) => (recs[0].data as { toolName: string }).toolName === 'waitForAbort' && recs.length === 2);
      if (!run) await new Promise((r) => setTimeout(r, 10));
    }
    expect(run!.map((x) => x.type)).toEqual([TOOL_STARTED, TOOL_FAILED]);
    expect(run![1].data).toMatchObject({ message: 'cancelled by the client' });
  });

  it('keeps the records across a restart', async () => {
    const before = await toolRecords();
    await t.restart();
    expect(await toolRecords()).toEqual(before);
    expect((await exec('multiply', { input: { a: 2, b: 2 } })).body.data.result).toBe(4);
  });
});

describe('with JWT authentication', () => {
  const SECRET = 'tools-test-secret';
  let a: TestServer;
  const token = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
  beforeAll(async () => {
    a = await startTestServer({ agents, tools: [whoAmI], auth: { secret: SECRET } });
  });
  afterAll(async () => {
    await a?.close();
  });

  it('keeps GET /tools public and protects execution', async () => {
    expect((await api(`${a.url}/tools`)).status).toBe(200);
    expect(await api(`${a.url}/tools/whoAmI/execute`, { method: 'POST', json: {} })).toMatchObject({ status: 401, body: { success: false, error: 'Authentication required' } });
  });

  it('gives the tool the user in context.user and the identity as userId, whatever the client claims', async () => {
    const headers = { authorization: `Bearer ${await token({ sub: 'alice', role: 'admin' })}` };
    const r = await api(`${a.url}/tools/whoAmI/execute`, { method: 'POST', headers, json: { context: { team: 't', userId: 'mallory' }, userId: 'mallory' } });
    expect(r.status).toBe(200);
    expect(r.body.data.result.userId).toBe('alice');
    expect(r.body.data.result.context).toMatchObject({ team: 't', user: { sub: 'alice', role: 'admin' } });
  });
});
