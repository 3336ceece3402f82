/**
 * `eventloom replay` as a child process on histories recorded by the real server and exported by
 * `eventloom export`: an unchanged workflow replays identical; a step renamed, a step inserted and a
 * branch condition changed are each caught, naming the step, with exit code 1; `--live` re-runs the
 * step functions and catches a changed output that feeding recorded results cannot see.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, startTestServer } from '../helpers/server.js';
import { runCli } from '../helpers/run-cli.js';
import original from '../fixtures/replay/original.config.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures', 'replay');
const config = (name: string) => path.join(FIXTURES, `${name}.config.ts`);

let tmp: string;
let history: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'eventloom-replay-'));
  const dataDir = path.join(tmp, 'data');
  const server = await startTestServer(original, { dataDir });
  const run = async (items: number[]) => (await api(`${server.url}/workflows/order-flow/execute`, { method: 'POST', json: { input: { items } } })).body.data;
  const small = await run([10, 20]);
  expect(small.status).toBe('completed');
  const waiting = await run([100, 50]);
  expect(waiting.status).toBe('suspended');
  const approved = await run([200]);
  const resumed = await api(`${server.url}/workflows/order-flow/executions/${approved.executionId}/resume`, { method: 'POST', json: { resumeData: { approved: true } } });
  expect(resumed.body.data.status).toBe('completed');
  Object.assign(ids, { small: small.executionId, waiting: waiting.executionId, approved: approved.executionId });
  await server.close();
  history = path.join(tmp, 'orders.jsonl');
  const exported = await runCli(['export', '--data', dataDir, '--out', history]);
  expect(exported.code, exported.output).toBe(0);
}, 60_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('eventloom replay', () => {
  it('reports every execution identical when the workflow is unchanged, with exit code 0', async () => {
    const r = await runCli(['replay', history, '--config', config('original')]);
    expect(r.code, r.output).toBe(0);
    expect(r.stdout.match(/^identical /gm)).toHaveLength(3);
    expect(r.stderr).toMatch(/3 identical, 0 diverged/);
  });

  it('catches a renamed step and names both ids', async () => {
    const r = await runCli(['replay', history, '--config', config('renamed')]);
    expect(r.code, r.output).toBe(1);
    expect(r.stdout.match(/^DIVERGED /gm)).toHaveLength(3);
    expect(r.stdout).toMatch(/at step 'compute-total' \(index 0\), record 2: \[step-renamed\] step 0 was 'compute-total' when recorded and is 'sum-items' in the current code/);
  });

  it('catches an inserted step and names it', async () => {
    const r = await runCli(['replay', history, '--config', config('inserted')]);
    expect(r.code, r.output).toBe(1);
    expect(r.stdout.match(/^DIVERGED /gm)).toHaveLength(3);
    expect(r.stdout).toMatch(/\[step-new\] step 'validate-order' is new: the current code runs it at index 1, before the recorded 'approval-gate'/);
  });

  it('catches a changed branch condition on the executions that took the branch only', async () => {
    const r = await runCli(['replay', history, '--config', config('branch'), '--json']);
    expect(r.code, r.output).toBe(1);
    const reports = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const byId = Object.fromEntries(reports.map((rep) => [rep.executionId, rep]));
    expect(byId[ids.small].result).toBe('identical');
    for (const id of [ids.waiting, ids.approved]) {
      expect(byId[id].result).toBe('diverged');
      expect(byId[id].divergence).toMatchObject({ kind: 'branch', stepId: 'approval-gate', stepIndex: 1, expected: 'suspended', actual: 'skipped' });
      expect(byId[id].divergence.message).toMatch(/the branch condition of 'approval-gate' now skips the step; the recording suspended \(manager approval\)/);
    }
  });

  it('replays one execution straight from the data directory', async () => {
    const r = await runCli(['replay', '--data', path.join(tmp, 'data'), '--execution', ids.approved, '--config', config('renamed')]);
    expect(r.code, r.output).toBe(1);
    expect(r.stdout.trim().split('\n')).toHaveLength(3); // one report line, then expected and actual
    expect(r.stdout).toContain(ids.approved);
  });

  it('feeds recorded outputs by default, and --live re-runs the steps and shows the changed output', async () => {
    const fed = await runCli(['replay', history, '--config', config('output')]);
    expect(fed.code, fed.output).toBe(0);
    const live = await runCli(['replay', history, '--config', config('output'), '--live']);
    expect(live.code, live.output).toBe(1);
    expect(live.stdout).toMatch(/at step 'finalise' \(index 2\), record \d+: \[output\] step 'finalise' returns another output\n {4}\$\.status: "approved" → "accepted"/);
    // the suspended run never reached finalise: still identical when live
    expect(live.stdout).toMatch(new RegExp(`^identical  order-flow ${ids.waiting} \\(suspended\\)`, 'm'));
  });

  it('keeps its exit code when the reader closes the pipe early', async () => {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '..', '..', 'src', 'cli', 'index.ts'), 'replay', history, '--config', config('renamed')], {
        env: { ...process.env, NODE_ENV: 'test' },
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.stdout.once('data', () => child.stdout.destroy());
      child.on('exit', (code) => resolve({ code, stderr }));
    });
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/0 identical, 3 diverged/);
  });

  it('answers a usage error with exit code 2', async () => {
    const r = await runCli(['replay', history, '--data', tmp]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/either --data <dir> or history files, not both/);
    const bad = await runCli(['replay', path.join(tmp, 'missing.jsonl')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/cannot read .*missing\.jsonl/);
    expect(readFileSync(history, 'utf8').split('\n')[0]).toMatch(/"format":"eventloom-history"/);
  });
});
