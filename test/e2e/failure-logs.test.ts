/**
 * Operators see failures: a workflow step that throws, a workflow whose result fails its result schema, a tool that throws (called directly or by an agent's model)
 * and an agent run that fails each write one log line (warn: the user's code or model failed, not the server), with
 * the ids that locate it, into the server's log, `GET /api/logs` and `WS /ws/logs`. An unexpected error of a route
 * is one error line, not two. No line of the server's log carries a key twice.
 */
import { MockLanguageModelV3 } from 'ai/test';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agents/define-agent.js';
import { createTool } from '../../src/kernel/define-tool.js';
import { andAll, andThen, andWorkflow, createWorkflow } from '../../src/workflows/builder.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { openFeed, wsUrl, type FeedClient } from '../observability/ws-client.js';

const flaky = createWorkflow(
  { id: 'flaky', name: 'Flaky' },
  andThen({
    id: 'log-checks',
    execute: ({ data, logger }) => {
      logger.info('checking');
      return data;
    },
  }),
  andAll({ id: 'fan', steps: [andThen({ id: 'inner', execute: ({ logger }) => (logger.info('inner step says hi'), 1) })] }),
  andThen({
    id: 'explode',
    execute: () => {
      throw new RangeError('the flux capacitor is off');
    },
  }),
);

const failingChild = createWorkflow(
  { id: 'failing-child', name: 'Failing child' },
  andThen({
    id: 'deep',
    execute: () => {
      throw new Error('deep trouble');
    },
  }),
);
const strict = createWorkflow({ id: 'strict', name: 'Strict', result: z.object({ total: z.number() }) }, andThen({ id: 'almost', execute: () => ({ total: 'twelve' }) }));

const nest = createWorkflow({ id: 'nest', name: 'Nest' }, andWorkflow({ id: 'sub', workflow: failingChild }));

const brokenTool = createTool({
  name: 'getWeather',
  description: 'always fails',
  parameters: z.object({ city: z.string() }),
  execute: () => {
    throw new Error('weather service down');
  },
});
const unlucky = createAgent({ id: 'unlucky', name: 'Unlucky', instructions: 'Try the weather.', tools: [brokenTool] });
const downModel = new MockLanguageModelV3({
  doGenerate: async () => {
    throw new Error('provider is down');
  },
});
const offline = createAgent({ id: 'offline', name: 'Offline', instructions: 'Fail.', model: downModel });

/** Top-level keys of one JSON object line, in order, repeats kept (JSON.parse would hide them). */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === '"') {
      let j = i + 1;
      while (line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      if (depth === 1 && line[j + 1] === ':') keys.push(JSON.parse(line.slice(i, j + 1)));
      i = j;
    } else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
  }
  return keys;
}

describe('failures in the server log, /api/logs and /ws/logs', () => {
  let t: TestServer;
  let feed: FeedClient;
  const lines: string[] = [];
  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    t = await startTestServer(
      {
        workflows: [flaky, nest, strict],
        agents: [unlucky, offline],
        tools: [brokenTool],
        routes: [
          {
            method: 'GET',
            path: '/custom/boom',
            handler: () => {
              throw new TypeError('wires crossed');
            },
          },
        ],
      },
      { logger },
    );
    feed = await openFeed(wsUrl(t.url, '/ws/logs?level=warn'));
  });
  afterAll(async () => {
    await feed.close();
    await t.close();
  });

  const warnings = async (q: string) => (await api(`${t.url}/api/logs?level=warn&${q}`)).body.data as any[];

  it('logs a throwing step once at warn with the workflow, execution and step ids', async () => {
    const r = await api(`${t.url}/workflows/flaky/execute`, { method: 'POST', json: { input: {} } });
    expect(r.status).toBe(500);
    const executionId = r.body.executionId;
    const found = await warnings(`executionId=${executionId}`);
    expect(found).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'workflow step failed',
        workflowId: 'flaky',
        executionId,
        stepId: 'explode',
        error: expect.objectContaining({ type: 'RangeError', message: 'the flux capacitor is off' }),
      }),
    ]);
    const live = await feed.waitFor((m) => m.type === 'update' && m.logs.some((l: any) => l.executionId === executionId));
    expect(live.logs.find((l: any) => l.executionId === executionId)).toMatchObject({ msg: 'workflow step failed', stepId: 'explode' });
    expect(lines.filter((l) => l.includes('workflow step failed') && l.includes(executionId))).toHaveLength(1);
  });

  it('logs a step failing in a sub-workflow once, found by the parent execution id', async () => {
    const r = await api(`${t.url}/workflows/nest/execute`, { method: 'POST', json: { input: {} } });
    expect(r.status).toBe(500);
    const executionId = r.body.executionId;
    expect(await warnings(`executionId=${executionId}`)).toEqual([
      expect.objectContaining({
        msg: 'workflow step failed',
        workflowId: 'failing-child',
        parentExecutionId: executionId,
        stepId: 'deep',
        error: expect.objectContaining({ message: 'deep trouble' }),
      }),
    ]);
  });

  it('logs an execution that ends in error for a result-schema mismatch once at warn with the workflow, execution and cause', async () => {
    const r = await api(`${t.url}/workflows/strict/execute`, { method: 'POST', json: { input: {} } });
    expect(r.status).toBe(500);
    expect(r.body.cause).toMatch(/^Workflow result does not match its result schema/);
    const executionId = r.body.executionId;
    expect(await warnings(`executionId=${executionId}`)).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'workflow result rejected',
        workflowId: 'strict',
        executionId,
        error: expect.objectContaining({ type: 'ValidationError', message: expect.stringContaining('Workflow result does not match its result schema: total:') }),
      }),
    ]);
    expect(lines.filter((l) => l.includes(executionId) && JSON.parse(l).level >= 40)).toHaveLength(1);
  });

  it('writes every key of a line once, a step logger and a nested step logger included', async () => {
    const r = await api(`${t.url}/workflows/flaky/execute`, { method: 'POST', json: { input: {} } });
    const executionId = r.body.executionId;
    const own = lines.filter((l) => l.includes(executionId));
    expect(own.map((l) => JSON.parse(l).msg)).toEqual(expect.arrayContaining(['checking', 'inner step says hi', 'workflow step failed']));
    for (const line of lines) {
      const keys = topLevelKeys(line);
      expect(keys, line).toEqual([...new Set(keys)]);
    }
    expect(JSON.parse(own.find((l) => l.includes('"checking"'))!)).toMatchObject({ workflowId: 'flaky', executionId, stepId: 'log-checks' });
    expect(JSON.parse(own.find((l) => l.includes('inner step says hi'))!)).toMatchObject({ executionId, stepId: 'inner' });
  });

  it('logs a tool that throws when executed directly, once at warn with the tool name', async () => {
    const r = await api(`${t.url}/tools/getWeather/execute`, { method: 'POST', json: { input: { city: 'Oslo' } } });
    expect(r.status).toBe(500);
    const found = (await warnings('limit=1000')).filter((e) => e.msg === 'tool failed');
    expect(found).toEqual([expect.objectContaining({ level: 'warn', component: 'tools', toolName: 'getWeather', error: expect.objectContaining({ message: 'weather service down' }) })]);
    await feed.waitFor((m) => m.type === 'update' && m.logs.some((l: any) => l.msg === 'tool failed'));
  });

  it("logs a tool that throws inside an agent's run, once at warn with the agent, run and tool call ids", async () => {
    const r = await api(`${t.url}/agents/unlucky/text`, { method: 'POST', json: { input: 'What is the weather in Oslo?' } });
    expect(r.status).toBe(200);
    const found = await warnings('agentId=unlucky');
    expect(found).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'agent tool failed',
        agentId: 'unlucky',
        toolName: 'getWeather',
        runId: expect.any(String),
        toolCallId: expect.any(String),
        error: expect.objectContaining({ message: 'weather service down' }),
      }),
    ]);
    await feed.waitFor((m) => m.type === 'update' && m.logs.some((l: any) => l.msg === 'agent tool failed'));
  });

  it('logs a failed agent run once at warn with the agent and run ids, and nothing at error', async () => {
    const r = await api(`${t.url}/agents/offline/text`, { method: 'POST', json: { input: 'hello' } });
    expect(r.status).toBe(500);
    const found = await warnings('agentId=offline');
    expect(found).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'agent run failed', agentId: 'offline', runId: expect.any(String), error: expect.objectContaining({ message: 'provider is down' }) }),
    ]);
    expect((await api(`${t.url}/api/logs?level=error&agentId=offline`)).body.data).toEqual([]);
    await feed.waitFor((m) => m.type === 'update' && m.logs.some((l: any) => l.msg === 'agent run failed'));
  });

  it('logs an unexpected error of a route once, at error', async () => {
    const r = await api(`${t.url}/custom/boom`);
    expect(r.status).toBe(500);
    const errors = (await api(`${t.url}/api/logs?level=error&limit=1000`)).body.data.filter((e: any) => e.error?.message === 'wires crossed');
    expect(errors).toEqual([expect.objectContaining({ level: 'error', msg: 'request failed', path: '/custom/boom', error: expect.objectContaining({ type: 'TypeError' }) })]);
    expect(lines.filter((l) => l.includes('wires crossed'))).toHaveLength(1);
  });
});
