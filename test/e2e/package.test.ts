/**
 * eventloom as a package in a user's own project, the way a new user gets it: `npm pack`, install the
 * tarball into an empty project (offline from the npm cache when it holds everything), `eventloom init`,
 * type-check, start, call the scaffolded agent, tool and workflow (suspend and resume), stop. The bundled
 * example config, copied verbatim into the project, serves too, and `/updates` reads the user's project.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { api } from '../helpers/server.js';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { startFakeRegistry, type LocalServer } from '../observability/helpers.js';
// @ts-expect-error the build script is plain JavaScript without declarations
import { newestSourceMtime } from '../../scripts/build.mjs';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const installedVersion = (name: string) => (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/** dist/ holds the transpiled sources and their declarations, both newer than every source file. */
function distIsFresh(): boolean {
  const files = ['dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/cli.js'].map((f) => path.join(ROOT, f));
  const newest = newestSourceMtime() as number;
  return files.every((f) => existsSync(f) && statSync(f).mtimeMs >= newest);
}

describe('eventloom installed from its tarball into a new project', () => {
  let work: string;
  let project: string;
  let registry: LocalServer;
  const servers: SpawnedServer[] = [];
  const npm = (args: string[], cwd: string) => run('npm', args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false' }, maxBuffer: 16 * 1024 * 1024 });

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'eventloom-package-'));
    // pack what would be published; the build (prepare) is skipped only when dist/ is already current
    await npm(['pack', '--pack-destination', work, ...(distIsFresh() ? ['--ignore-scripts'] : [])], ROOT);
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))!;
    project = path.join(work, 'my-app');
    cpSync(path.join(ROOT, 'test', 'fixtures', 'empty-project'), project, { recursive: true });
    await npm(
      ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(work, tarball), `zod@${installedVersion('zod')}`, `typescript@${installedVersion('typescript')}`, `@types/node@${installedVersion('@types/node')}`, `fast-check@${installedVersion('fast-check')}`, `vitest@${installedVersion('vitest')}`],
      project,
    );
    registry = await startFakeRegistry({ zod: '4.99.0', typescript: installedVersion('typescript'), '@types/node': installedVersion('@types/node'), 'fast-check': installedVersion('fast-check'), vitest: installedVersion('vitest') });
  }, 240_000);

  afterAll(async () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await registry?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const bin = () => path.join(project, 'node_modules', '.bin', 'eventloom');

  it('scaffolds with init, type-checks, and serves its agent, tool and workflow until stopped', async () => {
    const init = await run(bin(), ['init'], { cwd: project });
    expect(init.stdout).toContain('created  eventloom.config.ts');
    expect(init.stdout).toMatch(/Next:\n {2}npm run typecheck\n {2}npm start/);
    const pkg = JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8'));
    expect(pkg.scripts).toEqual({ start: 'eventloom start', typecheck: 'tsc --noEmit', test: 'vitest run' });
    expect(pkg.dependencies.eventloom).toMatch(/^file:/);

    // the user's project type-checks against the package's declarations
    await npm(['run', 'typecheck'], project);
    // the second entry of the exports map resolves from the user's project too
    const testing = await run(process.execPath, ['--input-type=module', '-e', "const m = await import('eventloom/testing'); console.log(typeof m.testWorkflow)"], { cwd: project });
    expect(testing.stdout.trim()).toBe('function');
    // the scaffold's property test of its workflow runs and passes with the user's own vitest
    const tested = await npm(['test'], project);
    expect(tested.stdout).toMatch(/1 passed/);

    const s = await spawnServer(['--port', '0', '--data', path.join(work, 'data')], { npm_config_registry: registry.url }, 30_000, [], { entry: bin(), cwd: project });
    servers.push(s);
    expect(s.output()).toContain(`"config":"${path.join(project, 'eventloom.config.ts')}"`);

    const text = await api(`${s.url}/agents/assistant/text`, { method: 'POST', json: { input: 'Please convert 100 from EUR to USD' } });
    expect(text.body.data.text).toBe('convertCurrency returned {"amount":107.3,"currency":"USD"}.');
    const tool = await api(`${s.url}/tools/convertCurrency/execute`, { method: 'POST', json: { input: { amount: 10, from: 'EUR', to: 'JPY' } } });
    expect(tool.body.data.result).toEqual({ amount: 1624, currency: 'JPY' });
    const started = await api(`${s.url}/workflows/expense-approval/execute`, { method: 'POST', json: { input: { description: 'Hotel', amount: 86, currency: 'GBP' } } });
    expect(started.body.data).toMatchObject({ status: 'suspended', suspension: { suspendData: { amountEur: 100 } } });
    const resumed = await api(`${s.url}/workflows/expense-approval/executions/${started.body.data.executionId}/resume`, { method: 'POST', json: { resumeData: { approved: false } } });
    expect(resumed.body.data).toMatchObject({ status: 'completed', result: { status: 'rejected', amountEur: 100 } });

    // the update check reads the user's project (the tarball dependency is not a registry package)
    const updates = await api(`${s.url}/updates`);
    expect(updates.status).toBe(200);
    expect(updates.body.data.updates.map((u: { name: string }) => u.name).sort()).toEqual(['@types/node', 'fast-check', 'typescript', 'vitest', 'zod']);
    expect(updates.body.data.updates.find((u: { name: string }) => u.name === 'zod')).toMatchObject({ installed: installedVersion('zod'), latest: '4.99.0', type: 'minor' });

    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('serves a CommonJS project from its .mts config, and names the fix for a .ts config there', async () => {
    const legacy = path.join(project, 'legacy');
    cpSync(path.join(ROOT, 'test', 'fixtures', 'empty-project'), legacy, { recursive: true });
    writeFileSync(path.join(legacy, 'package.json'), JSON.stringify({ name: 'legacy', version: '1.0.0', private: true, type: 'commonjs' }));
    const init = await run(bin(), ['init'], { cwd: legacy });
    expect(init.stdout).toContain('created  eventloom.config.mts');
    const s = await spawnServer(['--port', '0', '--data', path.join(work, 'data-legacy')], {}, 30_000, [], { entry: bin(), cwd: legacy });
    servers.push(s);
    expect((await api(`${s.url}/agents`)).body.data.map((a: { id: string }) => a.id)).toEqual(['assistant']);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);

    cpSync(path.join(legacy, 'eventloom.config.mts'), path.join(legacy, 'as-ts.config.ts'));
    const failed = await run(bin(), ['start', '--port', '0', '--data', path.join(work, 'data-legacy-ts'), '--config', 'as-ts.config.ts'], { cwd: legacy }).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`rename it to ${path.join(legacy, 'as-ts.config.mts')} or set "type": "module" in package.json`);
  });

  it('serves the bundled example config copied verbatim into the project', async () => {
    const copy = path.join(project, 'example');
    cpSync(path.join(project, 'node_modules', 'eventloom', 'examples'), copy, { recursive: true });
    expect(readFileSync(path.join(copy, 'eventloom.config.ts'), 'utf8')).toBe(readFileSync(path.join(ROOT, 'examples', 'eventloom.config.ts'), 'utf8'));
    const s = await spawnServer(['--port', '0', '--data', path.join(work, 'data-example'), '--config', 'example/eventloom.config.ts'], {}, 30_000, [], { entry: bin(), cwd: project });
    servers.push(s);
    const weather = await api(`${s.url}/agents/assistant/text`, { method: 'POST', json: { input: 'What is the weather in Oslo?' } });
    expect(weather.body.data.text).toBe('The weather in Oslo is 21°C.');
    const echo = await api(`${s.url}/workflows/echo/execute`, { method: 'POST', json: { input: { text: 'hi' } } });
    expect(echo.body.data).toMatchObject({ status: 'completed', result: { text: 'hi' } });
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });
});
