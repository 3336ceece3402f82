/**
 * Agent runs with `ai/test` mock models, through the real server on an in-memory log: model errors
 * before and during a stream, sub-agent delegation (as a tool, with forwarded parts), dynamic
 * instructions that see the caller's context, headers and authenticated user, the memory hooks,
 * and the workflow bridge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { SignJWT } from 'jose';
import { z } from 'zod';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';
import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { startServer, type EventloomServer } from '../../src/main.js';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { agentsModule, type AgentsModule } from '../../src/agents/module.js';
import { createAgent } from '../../src/agents/define-agent.js';
import type { AgentMemoryHooks, LoadContextArgs, SaveMessagesArgs } from '../../src/contract/memory-hooks.js';
import { createAuthenticator, resolveAuthConfig } from '../../src/http/auth/index.js';
import { api } from '../helpers/server.js';
import { collectSse } from '../helpers/sse.js';

const usage = { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } };
const finish = (unified: 'stop' | 'tool-calls' = 'stop'): LanguageModelV3StreamPart => ({ type: 'finish', finishReason: { unified, raw: unified }, usage });
const textParts = (text: string): LanguageModelV3StreamPart[] => [
  { type: 'stream-start', warnings: [] },
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: text },
  { type: 'text-end', id: 't' },
  finish(),
];
const stream = (parts: LanguageModelV3StreamPart[]) => ({ stream: convertArrayToReadableStream(parts) });
const lastRole = (o: LanguageModelV3CallOptions) => o.prompt[o.prompt.length - 1]?.role;
const systemOf = (o: LanguageModelV3CallOptions) =>
  o.prompt
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');

const explodingModel = new MockLanguageModelV3({
  doGenerate: async () => {
    throw new Error('model refused to generate');
  },
  doStream: async () =>
    stream([
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'partial ' },
      { type: 'error', error: new Error('model exploded') },
    ]),
});

/** Delegates to the researcher first, then answers with what came back. */
function delegatingModel() {
  const answer = (o: LanguageModelV3CallOptions) => {
    const tool = o.prompt.at(-1)!;
    const output = tool.role === 'tool' && tool.content[0]?.type === 'tool-result' ? tool.content[0].output : undefined;
    return `Research says: ${output && 'value' in output ? String(output.value) : '?'}`;
  };
  const call = { type: 'tool-call' as const, toolCallId: 'd1', toolName: 'delegate_to_researcher', input: JSON.stringify({ task: 'find the answer' }) };
  return new MockLanguageModelV3({
    doGenerate: async (o) =>
      lastRole(o) === 'tool'
        ? { content: [{ type: 'text', text: answer(o) }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
        : { content: [call], finishReason: { unified: 'tool-calls', raw: 'tool-calls' }, usage, warnings: [] },
    doStream: async (o) => stream(lastRole(o) === 'tool' ? textParts(answer(o)) : [{ type: 'stream-start', warnings: [] }, call, finish('tool-calls')]),
  });
}

const seen: { system?: string; prompt?: LanguageModelV3CallOptions['prompt'] } = {};
const capturingModel = new MockLanguageModelV3({
  doGenerate: async (o) => {
    seen.system = systemOf(o);
    seen.prompt = o.prompt;
    return { content: [{ type: 'text', text: 'captured' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  },
});

const memoryCalls: { load: LoadContextArgs[]; save: SaveMessagesArgs[] } = { load: [], save: [] };
const fakeMemory: AgentMemoryHooks = {
  describe: (agentId) => ({ type: 'LibSQLMemory', resourceId: agentId, storage: { adapter: 'eventloom-log' }, workingMemory: null, vectorDB: null, embeddingModel: null }),
  loadContext: async (args) => {
    memoryCalls.load.push(args);
    return {
      messages: [
        { role: 'user', content: 'earlier question' },
        { role: 'assistant', content: 'earlier answer' },
      ],
    };
  },
  saveMessages: async (args) => {
    memoryCalls.save.push(args);
  },
};

/** Answers every object request with a value that breaks the usual person schema. */
const wrongObjectModel = new MockLanguageModelV3({
  doGenerate: async () => ({ content: [{ type: 'text', text: '{"name":5}' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }),
  doStream: async () =>
    stream([
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: '{"name":' },
      { type: 'text-delta', id: 't', delta: '5}' },
      { type: 'text-end', id: 't' },
      finish(),
    ]),
});

const researcher = createAgent({ id: 'researcher', name: 'Researcher', instructions: 'You research.' });
const agents = [
  createAgent({ id: 'exploding', name: 'Exploding', instructions: 'x', model: explodingModel }),
  createAgent({ id: 'lead', name: 'Lead', instructions: 'You lead.', model: delegatingModel(), subAgents: [researcher] }),
  createAgent({
    id: 'contextual',
    name: 'Contextual',
    model: capturingModel,
    instructions: (ctx) => ({
      instructions: `Serve ${String((ctx.context.user as { name?: string } | undefined)?.name ?? 'anyone')} of team ${String(ctx.context.team ?? '-')} via ${ctx.headers['x-client'] ?? '?'} as ${ctx.userId ?? 'anonymous'}`,
      language: 'French',
    }),
  }),
  createAgent({ id: 'remembering', name: 'Remembering', instructions: 'Remember.', model: capturingModel, memory: fakeMemory }),
  createAgent({ id: 'plain', name: 'Plain', instructions: 'Plain.' }),
  createAgent({ id: 'wrong', name: 'Wrong', instructions: 'Wrong.', model: wrongObjectModel }),
];

const SECRET = 'test-secret-for-agents';
let server: EventloomServer;
const url = (p: string) => `${server.url}${p}`;
const post = (p: string, json: unknown, headers: Record<string, string> = {}) => api(url(p), { method: 'POST', json, headers });
const mod = () => server.modules.get('agents') as AgentsModule;

beforeAll(async () => {
  server = await startServer({
    config: { agents, auth: { secret: SECRET } },
    port: 0,
    log: createMemoryLog(),
    logger: pino({ level: 'silent' }),
    env: { NODE_ENV: 'test' },
    modules: [agentsModule],
    authenticator: async (ctx) => createAuthenticator(await resolveAuthConfig(ctx.config.auth as never, ctx.env), ctx.env),
  });
});
afterAll(async () => {
  await server?.close();
});

const token = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));

describe('model failures', () => {
  it('answers /text with 500 and the model message, and records the failure', async () => {
    const auth = { authorization: `Bearer ${await token({ sub: 'u1' })}` };
    const r = await post('/agents/exploding/text', { input: 'go' }, auth);
    expect(r).toMatchObject({ status: 500, body: { success: false, error: 'model refused to generate' } });
    const entry = (await api(url('/agents/exploding/history?limit=1'))).body.data.entries[0];
    expect(entry).toMatchObject({ operationType: 'text', status: 'error', metadata: { error: 'model refused to generate' }, userId: 'u1' });
  });

  it('sends a mid-stream model error as an error part with a string, closes, and records it', async () => {
    const auth = { authorization: `Bearer ${await token({ sub: 'u1' })}` };
    const { frames } = await collectSse(url('/agents/exploding/stream'), { method: 'POST', json: { input: 'go' }, headers: auth });
    expect(frames.map((f) => f.event)).toEqual(['start', 'start-step', 'text-start', 'text-delta', 'error']);
    expect(frames.at(-1)!.json).toEqual({ type: 'error', error: 'model exploded' });
    const entry = (await api(url('/agents/exploding/history?limit=1'))).body.data.entries[0];
    expect(entry).toMatchObject({ operationType: 'stream', status: 'error', metadata: { error: 'model exploded' } });
    const records = await server.log.readStream(`run:${entry.id}`);
    expect(records.map((r) => r.type)).toEqual(['run.started', 'run.failed']);
  });

  it('sends a mid-stream model error to /chat as an error chunk and still ends with [DONE]', async () => {
    const auth = { authorization: `Bearer ${await token({ sub: 'u1' })}` };
    const { frames } = await collectSse(url('/agents/exploding/chat'), { method: 'POST', json: { input: 'go' }, headers: auth });
    expect(frames.find((f) => f.json?.type === 'error')!.json).toEqual({ type: 'error', errorText: 'model exploded' });
    expect(frames.at(-1)!.data).toBe('[DONE]');
  });

  it('protects the generation routes when JWT auth is configured, while listing stays public', async () => {
    expect(await post('/agents/plain/text', { input: 'hi' })).toMatchObject({ status: 401, body: { success: false, error: 'Authentication required' } });
    expect((await api(url('/agents'))).status).toBe(200);
  });
});

describe('generated objects that do not match the schema', () => {
  const person = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };

  it('answers /object with 500 and the schema issues', async () => {
    const auth = { authorization: `Bearer ${await token({ sub: 'u1' })}` };
    const r = await post('/agents/wrong/object', { input: 'x', schema: person }, auth);
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ success: false, error: 'Generated object does not match schema: name: Invalid input: expected string, received number' });
    const entry = (await api(url('/agents/wrong/history?limit=1'))).body.data.entries[0];
    expect(entry).toMatchObject({ operationType: 'object', status: 'error', metadata: { error: r.body.error } });
  });

  it('ends /stream-object with an error event instead of the object', async () => {
    const auth = { authorization: `Bearer ${await token({ sub: 'u1' })}` };
    const { frames } = await collectSse(url('/agents/wrong/stream-object'), { method: 'POST', json: { input: 'x', schema: person }, headers: auth });
    expect(frames.filter((f) => f.event === 'object')).toEqual([]);
    expect(frames.at(-1)).toMatchObject({ event: 'error', json: { type: 'error', error: 'Generated object does not match schema: name: Invalid input: expected string, received number' } });
  });

  it('answers /text with options.output the same way', async () => {
    const auth = { authorization: `Bearer ${await token({ sub: 'u1' })}` };
    const r = await post('/agents/wrong/text', { input: 'x', options: { output: { type: 'object', schema: person } } }, auth);
    expect(r).toMatchObject({ status: 500, body: { error: 'Generated object does not match schema: name: Invalid input: expected string, received number' } });
  });
});

describe('sub-agents', () => {
  it('exposes a sub-agent to the model as a delegation tool and runs it as its own recorded run', async () => {
    const auth = { authorization: `Bearer ${await token({ sub: 'boss' })}` };
    const r = await post('/agents/lead/text', { input: 'delegate please' }, auth);
    expect(r.status).toBe(200);
    expect(r.body.data.text).toBe('Research says: You said: find the answer');
    expect(r.body.data.toolCalls).toEqual([{ type: 'tool-call', toolCallId: 'd1', toolName: 'delegate_to_researcher', input: { task: 'find the answer' } }]);
    const history = (await api(url('/agents/lead/history?limit=1'))).body.data.entries[0];
    const sub = await server.log.readStream(`run:${history.id}`);
    expect(sub[0].data).toMatchObject({ agentId: 'lead', userId: 'boss' });
    // the researcher is not a top-level agent, so its runs are found in the log, linked to the parent
    const streams = await server.log.listStreams('run:');
    const all = await Promise.all(streams.map((s) => server.log.readStream(s.stream, 1, 1)));
    const child = all.map((rs) => rs[0]).find((rec) => (rec.data as any).metadata?.parentRunId === history.id)!;
    expect(child.data).toMatchObject({ agentId: 'researcher', input: 'find the answer', userId: 'boss', metadata: { parentAgentId: 'lead' } });
    // the sub-agent's run is in its parent's trace, and the parent's history entry names that trace
    expect(history.metadata.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect((child.data as any).traceId).toBe(history.metadata.traceId);
  });

  it('forwards the sub-agent parts into a streaming parent with the sub-agent keys', async () => {
    const auth = { authorization: `Bearer ${await token({ sub: 'boss' })}` };
    const { frames } = await collectSse(url('/agents/lead/stream'), { method: 'POST', json: { input: 'delegate please' }, headers: auth });
    const forwarded = frames.filter((f) => f.json.subAgentId === 'researcher');
    expect(forwarded.map((f) => f.event)).toEqual(['text-start', 'text-delta', 'text-delta', 'text-delta', 'text-delta', 'text-delta', 'text-end']);
    expect(forwarded[1].json).toMatchObject({
      subAgentName: 'Researcher',
      executingAgentId: 'researcher',
      executingAgentName: 'Researcher',
      parentAgentId: 'lead',
      parentAgentName: 'Lead',
      agentPath: ['Lead', 'Researcher'],
    });
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => String(i + 1)));
    expect(frames.find((f) => f.event === 'tool-result')!.json.output).toBe('You said: find the answer');
    expect(frames.at(-1)!.json).toMatchObject({ type: 'finish' });
  });
});

describe('call context', () => {
  it('gives dynamic instructions the context, the headers, and the authenticated user as context.user', async () => {
    const auth = { authorization: `Bearer ${await token({ sub: 'ada', name: 'Ada' })}`, 'x-client': 'tests' };
    const r = await post('/agents/contextual/text', { input: 'who am I', options: { context: { team: 'blue' }, userId: 'mallory' } }, auth);
    expect(r.status).toBe(200);
    // the token's identity replaces the userId the client picked
    expect(seen.system).toBe('Serve Ada of team blue via tests as ada\n\nAlways answer in French.');
  });
});

describe('memory hooks', () => {
  it('shows the memory description in the listing', async () => {
    const item = (await api(url('/agents'))).body.data.find((a: any) => a.id === 'remembering');
    const config = { type: 'LibSQLMemory', resourceId: 'remembering', storage: { adapter: 'eventloom-log' }, workingMemory: null, vectorDB: null, embeddingModel: null };
    expect(item.memory).toEqual({ config, ...config, available: true, status: 'idle' });
  });

  it('loads earlier messages before the input and saves the input and the response', async () => {
    memoryCalls.load.length = 0;
    memoryCalls.save.length = 0;
    const auth = { authorization: `Bearer ${await token({ sub: 'u-mem' })}` };
    const r = await post('/agents/remembering/text', { input: 'and now?', options: { memory: { conversationId: 'conv-1', options: { contextLimit: 4 } } } }, auth);
    expect(r.status).toBe(200);
    expect(memoryCalls.load).toHaveLength(1);
    expect(memoryCalls.load[0]).toMatchObject({
      agentId: 'remembering',
      resourceId: 'remembering',
      userId: 'u-mem',
      conversationId: 'conv-1',
      contextLimit: 4,
      input: [{ role: 'user', content: 'and now?' }],
    });
    expect(seen.prompt!.filter((m) => m.role !== 'system').map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    // the response comes after the saves: the last one is final (write what is buffered now)
    expect(memoryCalls.save.map((s) => [s.phase, s.messages.map((m) => m.role), s.final ?? false])).toEqual([
      ['input', ['user'], false],
      ['step', ['assistant'], false],
      ['step', [], true],
    ]);
  });

  it('picks a new conversation id when only a userId is given, and writes nothing when readOnly', async () => {
    memoryCalls.load.length = 0;
    memoryCalls.save.length = 0;
    const auth = { authorization: `Bearer ${await token({ sub: 'u-mem' })}` };
    await post('/agents/remembering/text', { input: 'hello', options: { memory: { options: { readOnly: true } } } }, auth);
    expect(memoryCalls.load[0].conversationId).toMatch(/^[0-9a-f-]{36}$/);
    // the answer comes after the run's memory writer closed: any save would be recorded by now
    expect(memoryCalls.save).toEqual([]);
  });
});

describe('workflow bridge', () => {
  it('runs an agent for a workflow step, with structured output, recorded as workflow-step', async () => {
    const runner = mod().agentRunner;
    const plain = await runner.run('plain', 'step prompt', { context: {}, signal: new AbortController().signal, origin: { workflowId: 'wf', executionId: 'ex-1', stepId: 's1' } });
    expect(plain).toMatchObject({ text: 'You said: step prompt', usage: { promptTokens: expect.any(Number), completionTokens: 4 } });
    const structured = await runner.run('plain', 'a record', { schema: z.object({ title: z.string(), count: z.number() }), context: {}, userId: 'wf-user', signal: new AbortController().signal });
    expect(structured.object).toEqual({ title: expect.any(String), count: expect.any(Number) });
    const entries = (await api(url('/agents/plain/history?limit=2'))).body.data.entries;
    expect(entries.map((e: any) => e.operationType)).toEqual(['workflow-step', 'workflow-step']);
    // the caller named no trace: the entry names none (the projection links the run to the step's span)
    expect(entries[1].metadata).toEqual({ workflowId: 'wf', executionId: 'ex-1', stepId: 's1' });
    expect(entries[0].userId).toBe('wf-user');
  });

  it('rejects an unknown agent', async () => {
    await expect(mod().agentRunner.run('ghost', 'x', { context: {}, signal: new AbortController().signal })).rejects.toThrow('Agent ghost not found');
  });
});
