/**
 * `eventloom export` and `eventloom import` as child processes around the real server: executions
 * and an agent run exported from one data directory and imported into another read back identical
 * through the API;
 * the source is never written; a directory a server holds is refused; broken input is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, startTestServer } from '../helpers/server.js';
import { runCli } from '../helpers/run-cli.js';
import { freePort } from '../helpers/postgres.js';
import examples from '../../examples/eventloom.config.js';

let tmp: string;
let source: string;
const views: Record<string, unknown> = {};
let list: unknown;
let agentHistory: any;

/** Name and content hash of every file under `dir`. */
function snapshotFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = path.join(e.parentPath, e.name);
    out[path.relative(dir, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
  }
  return out;
}

const stateOf = async (url: string, workflowId: string, id: string) => (await api(`${url}/workflows/${workflowId}/executions/${id}/state`)).body;
const listOf = async (url: string) => (await api(`${url}/workflows/executions?limit=50`)).body;
const historyOf = async (url: string) => (await api(`${url}/agents/assistant/history`)).body;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'eventloom-export-'));
  source = path.join(tmp, 'source');
  const server = await startTestServer(examples, { dataDir: source });
  const exec = async (workflowId: string, input: unknown) => (await api(`${server.url}/workflows/${workflowId}/execute`, { method: 'POST', json: { input } })).body.data;
  const big = await exec('order-approval', { items: [{ price: 80, qty: 2 }] });
  const resumed = await exec('order-approval', { items: [{ price: 300, qty: 1 }] });
  await api(`${server.url}/workflows/order-approval/executions/${resumed.executionId}/resume`, { method: 'POST', json: { resumeData: { approved: false } } });
  const small = await exec('order-approval', { items: [{ price: 1, qty: 3 }] });
  const echo = await exec('echo', { text: 'hi' });
  const cancelled = await exec('order-approval', { items: [{ price: 500, qty: 1 }] });
  await api(`${server.url}/workflows/order-approval/executions/${cancelled.executionId}/cancel`, { method: 'POST', json: { reason: 'changed my mind' } });
  for (const [wf, r] of [
    ['order-approval', big],
    ['order-approval', resumed],
    ['order-approval', small],
    ['echo', echo],
    ['order-approval', cancelled],
  ] as const) {
    views[`${wf}/${r.executionId}`] = await stateOf(server.url, wf, r.executionId);
  }
  list = await listOf(server.url);
  // an agent run (the offline demo model): its own stream, shown by the agent's history
  const text = await api(`${server.url}/agents/assistant/text`, { method: 'POST', json: { input: 'Say hello' } });
  expect(text.status).toBe(200);
  agentHistory = await historyOf(server.url);
  expect(JSON.stringify(agentHistory.data)).toContain('Say hello');
  // while the server runs, the data directory is refused
  const refused = await runCli(['export', '--data', source]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/is in use by a running eventloom server \(LevelDB lock held\)/);
  await server.close();
}, 60_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('eventloom export and import', () => {
  it("refuses a data directory a server holds and names the running server's routes that read its executions, which answer", async () => {
    const held = path.join(tmp, 'held-export');
    const server = await startTestServer(examples, { dataDir: held });
    try {
      const run = (await api(`${server.url}/workflows/echo/execute`, { method: 'POST', json: { input: { text: 'held' } } })).body.data;
      const refused = await runCli(['export', '--data', held]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        'stop it first, or read its executions from the server: GET /workflows/:id/executions/:executionId/state (one execution, every event) or GET /workflows/executions?include=events',
      );
      const state = await api(`${server.url}/workflows/echo/executions/${run.executionId}/state`);
      expect(state.body.data.events.map((e: { type: string }) => e.type)).toContain('step-complete');
      const rows = (await api(`${server.url}/workflows/executions?include=events`)).body.data;
      expect(JSON.stringify(rows)).toContain(run.executionId);
    } finally {
      await server.close();
    }
  });

  it('round-trips every execution: the API reads them back identical from the imported data directory', async () => {
    const before = snapshotFiles(source);
    const file = path.join(tmp, 'all.jsonl');
    const exported = await runCli(['export', '--data', source, '--out', file]);
    expect(exported.code, exported.output).toBe(0);
    expect(exported.stderr).toMatch(/exported 6 stream\(s\)/);
    expect(snapshotFiles(source)).toEqual(before); // the source is never written

    const target = path.join(tmp, 'target');
    const imported = await runCli(['import', file, '--data', target]);
    expect(imported.code, imported.output).toBe(0);
    expect(imported.stderr).toMatch(/imported 6 stream\(s\)/);

    const server = await startTestServer(examples, { dataDir: target });
    try {
      for (const [key, view] of Object.entries(views)) {
        const [wf, id] = key.split('/');
        expect(await stateOf(server.url, wf, id)).toEqual(view);
      }
      expect(await listOf(server.url)).toEqual(list);
      expect(await historyOf(server.url)).toEqual(agentHistory);
    } finally {
      await server.close();
    }
  });

  it('exports one execution, or the executions a filter selects, as records exactly as logged', async () => {
    const [id] = Object.keys(views)
      .filter((k) => (views[k] as any).data.status === 'suspended')
      .map((k) => k.split('/')[1]);
    const one = await runCli(['export', '--data', source, '--execution', id]);
    expect(one.code, one.output).toBe(0);
    const lines = one.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ format: 'eventloom-history', formatVersion: 1, streams: 1 });
    expect(lines[1]).toMatchObject({ stream: `exec:${id}`, streamSeq: 1, type: 'execution.started', kind: 'workflow-execution@1' });
    expect(lines.slice(1).map((r) => r.streamSeq)).toEqual(lines.slice(1).map((_, i) => i + 1));

    const suspended = await runCli(['export', '--data', source, '--workflow', 'order-approval', '--status', 'suspended']);
    expect(suspended.stdout.trim().split('\n')[0]).toMatch(/"streams":1/);
    const completed = await runCli(['export', '--data', source, '--status', 'completed']);
    expect(JSON.parse(completed.stdout.split('\n')[0]).streams).toBe(4); // three executions and the agent run
    const runs = await runCli(['export', '--data', source, '--status', 'completed', '--since', '2000-01-01T00:00:00Z']);
    const runRecord = runs.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((r) => typeof r.stream === 'string' && r.stream.startsWith('run:'));
    expect(runRecord).toMatchObject({ streamSeq: 1, type: 'run.started', kind: 'agent-run@1' });
    const oneRun = await runCli(['export', '--data', source, '--run', runRecord.stream.slice('run:'.length)]);
    expect(oneRun.code, oneRun.output).toBe(0);
    const runLines = oneRun.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(runLines[0].streams).toBe(1);
    expect(runLines.slice(1).every((r) => r.stream === runRecord.stream)).toBe(true);
    expect(runLines.at(-1).type).toBe('run.finished');
    // a reader that closes the pipe early (`| head -1`) ends the export quietly
    const headOnly = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '..', '..', 'src', 'cli', 'index.ts'), 'export', '--data', source], {
        env: { ...process.env, NODE_ENV: 'test' },
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.stdout.once('data', () => child.stdout.destroy());
      child.on('exit', (code) => resolve({ code, stderr }));
    });
    expect(headOnly.stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(headOnly.code).toBe(0);
    const later = await runCli(['export', '--data', source, '--since', new Date(Date.now() + 60_000).toISOString()]);
    expect(JSON.parse(later.stdout.split('\n')[0]).streams).toBe(0);
  });

  it('refuses what it cannot do with a message naming the problem', async () => {
    const port = await freePort();
    const pg = await runCli(['export', '--database-url', `postgres://127.0.0.1:${port}/eventloom`]);
    expect(pg.code).toBe(1);
    expect(pg.stderr).toContain(`Cannot use the PostgreSQL database at postgres://127.0.0.1:${port}/eventloom`);
    const missing = await runCli(['export', '--data', source, '--execution', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/execution nope not found/);
    const badStatus = await runCli(['export', '--data', source, '--status', 'done']);
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toMatch(/--status must be one of running, suspended, completed, error, cancelled/);

    // a history whose records the machine rejects never reaches the data directory
    const file = path.join(tmp, 'all.jsonl');
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    const broken = lines.map((l) => l.replace('"type":"step.completed"', '"type":"execution.resumed"'));
    const brokenFile = path.join(tmp, 'broken.jsonl');
    writeFileSync(brokenFile, broken.join('\n') + '\n');
    const target = path.join(tmp, 'refused');
    const r = await runCli(['import', brokenFile, '--data', target]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/exec:\S+: record 3 'execution.resumed' is not accepted by workflow-execution@1 in state "running"/);

    // a target a server holds is refused; importing twice skips what is already there
    const held = path.join(tmp, 'held');
    const server = await startTestServer(examples, { dataDir: held });
    try {
      const locked = await runCli(['import', file, '--data', held]);
      expect(locked.code).toBe(2);
      expect(locked.stderr).toMatch(/in use by a running eventloom server \(LevelDB lock held\); stop it before importing/);
    } finally {
      await server.close();
    }
    const again = await runCli(['import', file, '--data', path.join(tmp, 'target')]);
    expect(again.code, again.output).toBe(0);
    expect(again.stderr).toMatch(/imported 0 stream\(s\), 0 record\(s\) into .*; 6 already present/);

    const gap = lines.filter((_, i) => i !== 3);
    writeFileSync(brokenFile, gap.join('\n') + '\n');
    const g = await runCli(['import', brokenFile, '--data', target]);
    expect(g.code).toBe(2);
    expect(g.stderr).toMatch(/broken\.jsonl:\d+: stream exec:\S+ jumps to streamSeq 4 after 2/);
  });
});
