/**
 * The floors eventloom's figures are read against (`npm run bench:floors`, and the ratios printed
 * by `bench:workflows`, `bench:agents` and `bench:peers`), each measured on the bytes a real
 * eventloom server produces:
 *
 * - `captureEventloom()`: starts the real CLI on the example config in a child process, keeps the
 *   body of `GET /agents` and the response of one `POST /workflows/echo/execute`, stops it, and
 *   reads from its LevelDB directory exactly what that execution wrote to the log (records and
 *   stream-index entries: key space, key length, value bytes);
 * - `startFloor('static' | 'durable')`: the bare servers of floor-server.ts on those bytes;
 * - `generateTextFloor()`: the `ai` SDK's `generateText` on the demo model in this process, with
 *   the assistant's instructions and tool (µs per call), no eventloom code;
 * - the SSE broadcaster floor is `fanoutBroadcaster` in sse-fanout.ts.
 * `measure()` runs one timed load (wrk when installed, else autocannon; peer-load.ts) against a
 * server process and reads its CPU time from /proc.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClassicLevel } from 'classic-level';
import type { DurableFixture } from './floor-server.js';
import { load, type LoadResult } from './peer-load.js';
import type { Scenario } from './peer-scenarios.js';
import { SCENARIOS } from './peer-scenarios.js';
import { cpuMs, startServer } from './peer-servers.js';
import { spawnChild } from './sse-fanout.js';

export const AGENTS_SCENARIO = SCENARIOS.find((s) => s.id === 'agents-list')!;
export const EXECUTE_SCENARIO = SCENARIOS.find((s) => s.id === 'workflow-execute')!;
export const TEXT_SCENARIO = SCENARIOS.find((s) => s.id === 'agent-text')!;

/** The same request, sent to a floor server's route. */
export const FLOOR_AGENTS: Scenario = { ...AGENTS_SCENARIO, id: 'floor-agents', label: 'floor: bare uWS GET /agents' };
export const FLOOR_EXECUTE: Scenario = { ...EXECUTE_SCENARIO, id: 'floor-execute', label: 'floor: bare uWS + classic-level execute', path: '/execute' };

export interface Captured {
  agentsBody: Buffer;
  fixture: DurableFixture;
}

/** Runs the real server once and keeps the bytes the floors reproduce. */
export async function captureEventloom(): Promise<Captured> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'eventloom-floors-capture-'));
  const dataDir = path.join(tmp, 'data');
  try {
    const server = await startServer('eventloom', 60_000, dataDir);
    let agentsBody: Buffer;
    let response: string;
    try {
      agentsBody = Buffer.from(await (await fetch(`${server.url}/agents`)).arrayBuffer());
      const res = await fetch(`${server.url}${EXECUTE_SCENARIO.path}`, { method: 'POST', body: EXECUTE_SCENARIO.body, headers: { 'content-type': 'application/json' } });
      response = await res.text();
    } finally {
      await server.stop();
    }
    const executionId = (JSON.parse(response) as { data: { executionId: string } }).data.executionId;
    const stream = `exec:${executionId}`;
    const db = new ClassicLevel<Buffer, string>(path.join(dataDir, 'log'), { keyEncoding: 'buffer', valueEncoding: 'utf8' });
    await db.open();
    const writes: DurableFixture['writes'] = [];
    try {
      // records (`r` + seq) of the execution's stream, then its stream-index entries (`s` + stream + 0 + seq)
      for await (const [key, value] of db.iterator({ gte: Buffer.from([0x72]), lt: Buffer.from([0x73]) })) {
        if ((JSON.parse(value) as { stream: string }).stream === stream) writes.push({ space: key[0], keyLength: key.length, value });
      }
      const prefix = Buffer.concat([Buffer.from([0x73]), Buffer.from(stream), Buffer.from([0])]);
      for await (const [key, value] of db.iterator({ gte: prefix, lt: Buffer.concat([prefix, Buffer.alloc(9, 0xff)]) })) writes.push({ space: key[0], keyLength: key.length, value });
    } finally {
      await db.close();
    }
    return { agentsBody, fixture: { writes, response } };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export interface FloorServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts a floor server child: 'static' serves GET /agents's bytes, 'durable' the execute floor. */
export async function startFloor(kind: 'static' | 'durable', captured: Captured): Promise<FloorServer> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), `eventloom-floor-${kind}-`));
  const file = path.join(tmp, 'fixture');
  let args: string[];
  if (kind === 'static') {
    writeFileSync(file, captured.agentsBody);
    args = ['static', file, AGENTS_SCENARIO.path];
  } else {
    writeFileSync(file, JSON.stringify(captured.fixture));
    args = ['durable', file, path.join(tmp, 'data')];
  }
  const { child, match } = await spawnChild([path.join(import.meta.dirname, 'floor-server.ts'), ...args], /floor listening on (\d+)/);
  const exited = new Promise((r) => child.once('exit', r));
  return {
    url: `http://127.0.0.1:${match[1]}`,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGKILL');
      await exited;
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

export interface Measured {
  result: LoadResult;
  /** server CPU time (user + system, all threads) per response, µs */
  cpuUsPerReq: number;
}

/** One timed load against `url` (the process `pid` serves it). */
export async function measure(url: string, pid: number, scenario: Scenario, connections: number, durationS: number): Promise<Measured> {
  const cpu0 = cpuMs(pid);
  const result = await load(url, scenario, connections, { durationS });
  return { result, cpuUsPerReq: ((cpuMs(pid) - cpu0) * 1000) / Math.max(1, result.responses) };
}

/**
 * µs per `generateText` call on the demo model, in this process: the assistant's instructions, its
 * `getWeather` tool, the benchmark's prompt; after `warmup` untimed calls.
 */
export async function generateTextFloor(calls = 2_000, warmup = 500): Promise<{ usPerCall: number; text: string }> {
  const { generateText, tool } = await import('ai');
  const { z } = await import('zod');
  const { createDemoModel } = await import('../../src/agents/models/demo-model.js');
  const model = createDemoModel();
  const tools = {
    getWeather: tool({
      description: 'Get the current weather for a city',
      inputSchema: z.object({ city: z.string().min(1).describe('The city, e.g. Paris') }),
      execute: async ({ city }) => ({ city, tempC: 21 }),
    }),
  };
  const input = (JSON.parse(TEXT_SCENARIO.body!) as { input: string }).input;
  const call = () =>
    generateText({
      model,
      system: 'You are a helpful assistant. Use the getWeather tool when the user asks about the weather, and answer briefly.',
      messages: [{ role: 'user', content: input }],
      tools,
    });
  for (let i = 0; i < warmup; i++) await call();
  const cpu0 = process.cpuUsage();
  let text = '';
  for (let i = 0; i < calls; i++) text = (await call()).text;
  const cpu = process.cpuUsage(cpu0);
  return { usPerCall: (cpu.user + cpu.system) / calls, text };
}
