/**
 * Direct tool runs and their records, on the in-memory log: the tool starts only once
 * `tool.started` is durable, the caller hears back only once the terminal record is durable, a
 * failed start record runs nothing, and results that JSON cannot carry count as failures.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { AppendOptions, EventLog, NewRecord } from '../../src/log/types.js';
import { AppError } from '../../src/errors.js';
import { createTool } from '../../src/kernel/define-tool.js';
import { TOOL_COMPLETED, TOOL_FAILED, TOOL_STARTED, runToolDirect, toolStream } from '../../src/tools/tool-runs.js';

const call = (input: unknown = {}) => ({ input, context: { k: 'v' }, signal: new AbortController().signal });

/** A log whose appends wait for `release()`, one at a time. */
function gatedLog() {
  const log = createMemoryLog();
  const gates: Array<() => void> = [];
  const gated: EventLog = Object.create(log) as EventLog;
  gated.append = (stream: string, records: NewRecord[], options?: AppendOptions) => new Promise<void>((r) => gates.push(r)).then(() => log.append(stream, records, options));
  return { log, gated, pending: () => gates.length, release: () => gates.shift()!() };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('runToolDirect', () => {
  it('records started then completed, with injected ids and clock', async () => {
    const log = createMemoryLog();
    let t = 1_000;
    const tool = createTool({ name: 'add', description: '', parameters: z.object({ a: z.number() }), execute: ({ a }) => ((t += 7), a + 1) });
    const r = await runToolDirect({ log, now: () => t, newId: () => 'run-1' }, tool, { ...call({ a: 1 }), userId: 'u', conversationId: 'c' });
    expect(r).toEqual({ toolName: 'add', result: 2, executionTime: 7, timestamp: new Date(1_007).toISOString(), runId: 'run-1' });
    const recs = await log.readStream(toolStream('run-1'));
    expect(recs.map((x) => [x.type, x.data])).toEqual([
      [TOOL_STARTED, { toolName: 'add', input: { a: 1 }, userId: 'u', conversationId: 'c' }],
      [TOOL_COMPLETED, { output: 2, durationMs: 7 }],
    ]);
  });

  it('runs the tool only after tool.started is durable, and answers only after the terminal record is', async () => {
    const g = gatedLog();
    let ran = false;
    const tool = createTool({ name: 'x', description: '', parameters: z.object({}), execute: () => ((ran = true), 'done') });
    let settled = false;
    const p = runToolDirect({ log: g.gated, newId: () => 'gated' }, tool, call()).then((v) => ((settled = true), v));
    await tick();
    expect(g.pending()).toBe(1);
    expect(ran).toBe(false);
    g.release();
    while (g.pending() === 0) await tick();
    expect(ran).toBe(true);
    expect(settled).toBe(false);
    g.release();
    expect((await p).result).toBe('done');
    expect((await g.log.readStream('tool:gated')).map((x) => x.type)).toEqual([TOOL_STARTED, TOOL_COMPLETED]);
  });

  it('runs nothing when the start record cannot be written', async () => {
    const log = createMemoryLog();
    await log.close();
    let ran = false;
    const tool = createTool({ name: 'x', description: '', parameters: z.object({}), execute: () => (ran = true) });
    await expect(runToolDirect({ log }, tool, call())).rejects.toThrow();
    expect(ran).toBe(false);
  });

  it('records tool.failed and rejects with a 500 carrying the message', async () => {
    const log = createMemoryLog();
    const tool = createTool({ name: 'bad', description: '', parameters: z.object({}), execute: async () => Promise.reject(new Error('no luck')) });
    const err = await runToolDirect({ log, newId: () => 'f' }, tool, call()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ status: 500, message: 'no luck' });
    expect((await log.readStream('tool:f')).map((x) => [x.type, x.data])).toEqual([
      [TOOL_STARTED, { toolName: 'bad', input: {} }],
      [TOOL_FAILED, { message: 'no luck', durationMs: expect.any(Number) }],
    ]);
  });

  it('names the tool when it fails without a message, and treats a non-JSON result as a failure', async () => {
    const log = createMemoryLog();
    const silent = createTool({ name: 'silent', description: '', parameters: z.object({}), execute: () => Promise.reject(new Error('')) });
    await expect(runToolDirect({ log }, silent, call())).rejects.toThrow('Tool silent failed');
    const cyclic = createTool({
      name: 'cyclic',
      description: '',
      parameters: z.object({}),
      execute: () => {
        const o: Record<string, unknown> = {};
        o.self = o;
        return o;
      },
    });
    await expect(runToolDirect({ log, newId: () => 'cy' }, cyclic, call())).rejects.toThrow(/circular/i);
    expect((await log.readStream('tool:cy')).map((x) => x.type)).toEqual([TOOL_STARTED, TOOL_FAILED]);
  });

  it('refuses a tool without execute before recording anything', async () => {
    const log = createMemoryLog();
    const client = createTool({ name: 'client', description: '', parameters: z.object({}) });
    await expect(runToolDirect({ log }, client, call())).rejects.toMatchObject({ status: 400, message: 'Tool client cannot be executed on the server' });
    expect(log.head()).toBe(0);
  });

  it('gives the tool the context, identity and abort signal of the call', async () => {
    const log = createMemoryLog();
    const ac = new AbortController();
    let seen: unknown;
    const tool = createTool({ name: 'see', description: '', parameters: z.object({}), execute: (_i, o) => ((seen = { ...o, aborted: o.signal.aborted, same: o.signal === ac.signal }), 1) });
    await runToolDirect({ log }, tool, { input: {}, context: { team: 'red' }, userId: 'u9', signal: ac.signal });
    expect(seen).toMatchObject({ context: { team: 'red' }, userId: 'u9', aborted: false, same: true });
    expect(seen).not.toHaveProperty('conversationId');
  });
});
