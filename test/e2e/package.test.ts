/**
 * eventloom as a package in a user's own project, the way a new user gets it: `npm pack`, install the
 * tarball into an empty project (offline from the npm cache when it holds everything), `eventloom init`,
 * type-check, start, call the scaffolded agent, tool and workflow (suspend and resume), stop. The bundled
 * example config, copied verbatim into the project, serves too, and `/updates` reads the user's project.
 * The README's Quick start runs command for command (`npx <tarball> init my-app`, then `npm install`,
 * `npm test`, `npm start` in my-app), and so does adding eventloom to a project `npm init -y` made. The
 * install carries no install-time analytics (@scarf/scarf) and no prepare script that fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { api } from '../helpers/server.js';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { until } from '../helpers/until.js';
import { startFakeRegistry, type LocalServer } from '../observability/helpers.js';
// @ts-expect-error the build script is plain JavaScript without declarations
import { newestSourceMtime } from '../../scripts/build.mjs';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const installedVersion = (name: string) => (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/** dist/ holds the transpiled sources and their declarations, both newer than every source file, and the explorer's files. */
function distIsFresh(): boolean {
  const files = ['dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/cli/index.js'].map((f) => path.join(ROOT, f));
  const newest = newestSourceMtime() as number;
  return files.every((f) => existsSync(f) && statSync(f).mtimeMs >= newest) && existsSync(path.join(ROOT, 'dist', 'explorer', 'swagger-ui-bundle.js'));
}

/** whether any process of the process group `pgid` is still running */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** npm's own entry script, run with this Node: `npm start` as a child process the tests can stop */
const NPM_CLI = path.join(path.dirname(realpathSync(path.join(path.dirname(process.execPath), 'npm'))), 'npm-cli.js');

describe('eventloom installed from its tarball into a new project', () => {
  let work: string;
  let project: string;
  let registry: LocalServer;
  const servers: SpawnedServer[] = [];
  /** process groups of servers started through `npm start` (npm → sh → eventloom) */
  const groups: number[] = [];
  const npm = (args: string[], cwd: string) => run('npm', args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false' }, maxBuffer: 16 * 1024 * 1024 });

  let tarball: string;

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'eventloom-package-'));
    // pack what would be published; the build (prepare) is skipped only when dist/ is already current
    await npm(['pack', '--pack-destination', work, ...(distIsFresh() ? ['--ignore-scripts'] : [])], ROOT);
    tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))!;
    project = path.join(work, 'my-app');
    cpSync(path.join(ROOT, 'test', 'fixtures', 'empty-project'), project, { recursive: true });
    await npm(
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        path.join(work, tarball),
        `zod@${installedVersion('zod')}`,
        `typescript@${installedVersion('typescript')}`,
        `@types/node@${installedVersion('@types/node')}`,
        `fast-check@${installedVersion('fast-check')}`,
        `vitest@${installedVersion('vitest')}`,
      ],
      project,
    );
    registry = await startFakeRegistry({
      zod: '4.99.0',
      typescript: installedVersion('typescript'),
      '@types/node': installedVersion('@types/node'),
      'fast-check': installedVersion('fast-check'),
      vitest: installedVersion('vitest'),
    });
  }, 600_000);

  afterAll(async () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    for (const pgid of groups) if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
    await registry?.close();
    if (work) {
      // npx installed the tarball into a directory of npm's cache: remove that install too
      const npxCache = path.join(process.env.npm_config_cache ?? path.join(os.homedir(), '.npm'), '_npx');
      for (const d of existsSync(npxCache) ? readdirSync(npxCache) : []) {
        const manifest = path.join(npxCache, d, 'package.json');
        if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes(path.basename(work))) rmSync(path.join(npxCache, d), { recursive: true, force: true });
      }
      rmSync(work, { recursive: true, force: true });
    }
    // four installed projects to delete
  }, 300_000);

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

    // the explorer's files come with the package: swagger-ui-dist and its install-time analytics are not installed
    const bundle = await fetch(`${s.url}/ui/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toContain('javascript');
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    expect(existsSync(path.join(project, 'node_modules', '@scarf'))).toBe(false);
    expect(existsSync(path.join(project, 'node_modules', 'swagger-ui-dist'))).toBe(false);

    // the update check reads the user's project (the tarball dependency is not a registry package)
    const updates = await api(`${s.url}/updates`);
    expect(updates.status).toBe(200);
    expect(updates.body.data.updates.map((u: { name: string }) => u.name).sort()).toEqual(['@types/node', 'fast-check', 'typescript', 'vitest', 'zod']);
    expect(updates.body.data.updates.find((u: { name: string }) => u.name === 'zod')).toMatchObject({ installed: installedVersion('zod'), latest: '4.99.0', type: 'minor' });

    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  }, 300_000);

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

  it('carries a prepare script that succeeds in the installed package (the build scripts stay in the repository)', async () => {
    const installed = path.join(project, 'node_modules', 'eventloom');
    expect(existsSync(path.join(installed, 'scripts'))).toBe(false);
    const prepared = await npm(['run', 'prepare'], installed);
    expect(prepared.stderr).not.toMatch(/Cannot find module/);
  }, 60_000);

  it("runs the README's Quick start command for command: npx <tarball> init my-app, then npm install, npm test and npm start in my-app", async () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const quickStart = ['cd eventloom && npm install && npm pack && cd ..', `npx ./eventloom/eventloom-${VERSION}.tgz init my-app`, 'cd my-app && npm install && npm start'];
    for (const line of quickStart) expect(readme).toContain(`\n${line} `);
    // a directory holding a checkout named eventloom, where `npm pack` left the tarball
    const here = path.join(work, 'quick-start');
    mkdirSync(path.join(here, 'eventloom'), { recursive: true });
    cpSync(path.join(work, tarball), path.join(here, 'eventloom', `eventloom-${VERSION}.tgz`));

    const init = await run('npx', ['--yes', `./eventloom/eventloom-${VERSION}.tgz`, 'init', 'my-app'], {
      cwd: here,
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_prefer_offline: 'true' },
    });
    expect(init.stdout).toContain(`eventloom is not on the npm registry yet: package.json depends on file:../eventloom/eventloom-${VERSION}.tgz, the tarball this eventloom was installed from.`);
    expect(init.stdout).toMatch(/Next:\n {2}cd my-app && npm install\n {2}npm start/);
    const app = path.join(here, 'my-app');
    expect(JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8')).dependencies.eventloom).toBe(`file:../eventloom/eventloom-${VERSION}.tgz`);

    await npm(['install', '--prefer-offline', '--no-audit', '--no-fund'], app);
    expect(existsSync(path.join(app, 'node_modules', '@scarf'))).toBe(false);
    expect((await npm(['test'], app)).stdout).toMatch(/1 passed/);
    const s = await spawnServer(['--', '--port', '0', '--data', path.join(work, 'data-quick-start')], {}, 60_000, [], { entry: NPM_CLI, cwd: app, detached: true });
    servers.push(s);
    groups.push(s.child.pid!);
    const text = await api(`${s.url}/agents/assistant/text`, { method: 'POST', json: { input: 'Please convert 100 from EUR to USD' } });
    expect(text.body.data.text).toBe('convertCurrency returned {"amount":107.3,"currency":"USD"}.');
    // npm runs the server through a shell, which does not pass SIGTERM on: signal the whole process group
    process.kill(-s.child.pid!, 'SIGTERM');
    await s.exited;
    await until(() => !groupAlive(s.child.pid!), 'the server started by npm start to exit', 30_000);
  }, 600_000);

  it('adds eventloom to a project npm init -y made: init replaces the placeholder test script, and npm test runs the property test', async () => {
    const existing = path.join(work, 'existing');
    mkdirSync(existing);
    await npm(['init', '-y'], existing);
    expect(JSON.parse(readFileSync(path.join(existing, 'package.json'), 'utf8')).scripts.test).toBe('echo "Error: no test specified" && exit 1');
    await npm(['install', '--prefer-offline', '--no-audit', '--no-fund', path.join('..', tarball), `zod@${installedVersion('zod')}`], existing);
    const init = await run('npx', ['eventloom', 'init'], { cwd: existing, env: { ...process.env, npm_config_update_notifier: 'false' } });
    expect(init.stdout).toContain(
      `updated  package.json (added scripts.start, scripts.typecheck, devDependencies.typescript, devDependencies.@types/node, devDependencies.vitest, devDependencies.fast-check; replaced npm's placeholder test script with "vitest run")`,
    );
    expect(init.stdout).toContain('Then npm test runs the property test of expense-approval (expense-approval.prop.test.mts).');
    await npm(['install', '--prefer-offline', '--no-audit', '--no-fund'], existing);
    expect((await npm(['test'], existing)).stdout).toMatch(/1 passed/);
  }, 600_000);
});
