/**
 * `eventloom dev` as a person uses it, in a real child process: it serves the config, and when a
 * file the config imports is edited it restarts the server, which then serves the new workflow on
 * the same data directory (an execution from before the edit is still there). A config that stops
 * loading leaves the watch running, and fixing it brings the server back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { api } from '../helpers/server.js';
import { devServerNodeFlags } from '../../src/cli/dev.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const BUILDER = path.join(ROOT, 'src', 'workflows', 'builder.ts');

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGTERM');
      await new Promise((r) => c.once('exit', r));
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The workflows module of the project: `ids` each become a one-step workflow. */
const workflowsModule = (ids: string[]) =>
  [
    `import { andThen, createWorkflow } from ${JSON.stringify(BUILDER)};`,
    `export const all = [${ids.map((id) => `createWorkflow({ id: '${id}' }, andThen({ id: 'only', execute: () => '${id}' }))`).join(', ')}];`,
    '',
  ].join('\n');

function startDev(project: string, data: string) {
  const child = spawn(process.execPath, ['--import', TSX, path.join(ROOT, 'src', 'cli', 'index.ts'), 'dev', '--port', '0', '--data', data, '--log-format', 'json'], {
    cwd: project,
    env: { ...process.env, NODE_ENV: 'test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const urls = () => [...out.matchAll(/eventloom listening on (http:\/\/[^\s"]+)/g)].map((m) => m[1]);
  /** The URL of the n-th server start (1-based), once it listens. */
  const listening = async (n: number, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    while (urls().length < n) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`start ${n} did not listen:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return urls()[n - 1];
  };
  return { child, exited, listening, output: () => out };
}

const workflowIds = async (url: string) => ((await api(`${url}/workflows`)).body.data as Array<{ id: string }>).map((w) => w.id);

describe('eventloom dev', () => {
  it('runs its server with source maps on, its own loader flags and without the debugger flags', () => {
    expect(devServerNodeFlags(['--import', 'tsx', '--inspect=9229', '--inspect-brk'])).toEqual(['--import', 'tsx', '--enable-source-maps']);
    expect(devServerNodeFlags(['--enable-source-maps'])).toEqual(['--enable-source-maps']);
  });

  it('restarts the server when a file the config imports changes, serving the new workflow on the same data directory', async () => {
    const project = mkdtempSync(path.join(os.tmpdir(), 'eventloom-dev-'));
    dirs.push(project);
    const data = path.join(project, '.eventloom');
    writeFileSync(path.join(project, 'workflows.ts'), workflowsModule(['first']));
    writeFileSync(path.join(project, 'eventloom.config.ts'), "import { all } from './workflows.ts';\nexport default { workflows: all };\n");
    const dev = startDev(project, data);

    const before = await dev.listening(1);
    expect(await workflowIds(before)).toEqual(['first']);
    const ran = await api(`${before}/workflows/first/execute`, { method: 'POST', json: { input: {} } });
    expect(ran.status).toBe(200);

    writeFileSync(path.join(project, 'workflows.ts'), workflowsModule(['first', 'second']));
    const after = await dev.listening(2);
    expect(dev.output()).toContain('"msg":"workflows.ts changed: restarting the server"');
    expect(await workflowIds(after)).toEqual(['first', 'second']);
    expect((await api(`${after}/workflows/second/execute`, { method: 'POST', json: { input: {} } })).body.data).toMatchObject({ status: 'completed', result: 'second' });
    // the same data directory: the execution from before the restart is listed
    const listed = (await api(`${after}/workflows/executions?workflowId=first`)).body.data as Array<{ id: string }>;
    expect(listed.map((e) => e.id)).toEqual([ran.body.data.executionId]);
    // the server before the edit is gone
    await expect(fetch(`${before}/workflows`)).rejects.toThrow();

    // a config that no longer loads: the server exits, the watch goes on, and a fix brings it back
    writeFileSync(path.join(project, 'workflows.ts'), 'export const all = [zz];\n');
    const deadline = Date.now() + 60_000;
    while (!dev.output().includes('the server exited (1): save a config file to start it again') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(dev.output()).toContain('eventloom: zz is not defined');
    expect(dev.child.exitCode).toBeNull();
    writeFileSync(path.join(project, 'workflows.ts'), workflowsModule(['third']));
    expect(await workflowIds(await dev.listening(3))).toEqual(['third']);

    dev.child.kill('SIGTERM');
    expect(await dev.exited).toBe(0);
  }, 180_000);
});
