/**
 * The update check and installer: versions compared with the latest tag of the registry npm is configured with,
 * aliases resolved, a hanging, refusing or ignorant registry answered within the budget with the installed
 * versions and a reason per unknown package, installs run through the (injected) npm command.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkUpdates, installLatest, trackedPackages, updateType, updatesOptions, isValidPackageName, type UpdatesOptions } from '../../src/observability/updates.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fakeProject, startFakeRegistry, startLocalServer, type LocalServer } from './helpers.js';

describe('updateType', () => {
  it('classifies the difference between the installed and the latest version', () => {
    expect(updateType('1.2.3', '2.0.0')).toBe('major');
    expect(updateType('1.2.3', '1.3.0')).toBe('minor');
    expect(updateType('1.2.3', '1.2.4')).toBe('patch');
    expect(updateType('1.2.3', '1.2.3')).toBe('latest');
    expect(updateType('2.0.0', '1.9.9')).toBe('latest');
    expect(updateType('1.2.3-beta.1', '1.2.3')).toBe('patch');
  });
});

describe('package names', () => {
  it('accepts npm names, scoped names and legacy capitalised names, and rejects others', () => {
    for (const ok of ['pino', '@scope/pkg', 'uWebSockets.js', 'a-b_c.d']) expect(isValidPackageName(ok)).toBe(true);
    for (const bad of ['', '../etc', 'a b', '@scope', 'x;rm -rf /', '-flag', '.hidden', 'a'.repeat(215)]) expect(isValidPackageName(bad)).toBe(false);
  });
});

describe('checkUpdates', () => {
  let registry: LocalServer;
  beforeAll(async () => {
    registry = await startFakeRegistry({ pino: '10.5.0', zod: '4.6.7', '@scope/tool': '2.0.0', 'aliased-target': '3.1.0', vitest: '5.0.0' });
  });
  afterAll(() => registry.close());

  const project = () =>
    fakeProject({
      deps: { pino: '^10.4.0', zod: '^4.6.7', '@scope/tool': '^1.0.0', alias: 'npm:aliased-target@3.0.0', local: 'file:../x' },
      devDeps: { vitest: '^4.1.0' },
      installed: { pino: '10.4.0', zod: '4.6.7', '@scope/tool': '1.5.0', alias: '3.0.0', vitest: '4.1.12' },
    });

  it('lists every registry package of package.json with installed and latest versions', async () => {
    const p = project();
    const opts: UpdatesOptions = { ...updatesOptions({ updates: { packageJson: p.packageJson, registryUrl: registry.url } }, {}) };
    const report = await checkUpdates(opts);
    expect(report.updates).toEqual([
      { name: 'pino', installed: '10.4.0', latest: '10.5.0', type: 'minor', packageJson: 'dependencies' },
      { name: 'zod', installed: '4.6.7', latest: '4.6.7', type: 'latest', packageJson: 'dependencies' },
      { name: '@scope/tool', installed: '1.5.0', latest: '2.0.0', type: 'major', packageJson: 'dependencies' },
      { name: 'alias', installed: '3.0.0', latest: '3.1.0', type: 'minor', packageJson: 'dependencies' },
      { name: 'vitest', installed: '4.1.12', latest: '5.0.0', type: 'major', packageJson: 'devDependencies' },
    ]);
    expect(report).toMatchObject({ hasUpdates: true, count: 4, message: 'Found 4 outdated packages' });
  });

  it('answers within the budget when the registry hangs, with the installed versions and the reason for each unknown latest', async () => {
    const hanging = await startLocalServer(() => undefined);
    try {
      const p = project();
      const started = Date.now();
      const report = await checkUpdates({ ...updatesOptions({}, {}), packageJson: p.packageJson, registryUrl: hanging.url, timeoutMs: 300 });
      expect(Date.now() - started).toBeLessThan(3000);
      const reason = `no answer from ${hanging.url}/ within 300 ms`;
      expect(report.updates).toEqual([
        { name: 'pino', installed: '10.4.0', latest: null, type: 'unknown', packageJson: 'dependencies', reason },
        { name: 'zod', installed: '4.6.7', latest: null, type: 'unknown', packageJson: 'dependencies', reason },
        { name: '@scope/tool', installed: '1.5.0', latest: null, type: 'unknown', packageJson: 'dependencies', reason },
        { name: 'alias', installed: '3.0.0', latest: null, type: 'unknown', packageJson: 'dependencies', reason },
        { name: 'vitest', installed: '4.1.12', latest: null, type: 'unknown', packageJson: 'devDependencies', reason },
      ]);
      expect(report).toMatchObject({ hasUpdates: false, count: 0, message: `Could not check for updates: ${reason}`, registry: `${hanging.url}/` });
    } finally {
      await hanging.close();
    }
  });

  it('keeps its deadline while the registry trickles a body that never ends', async () => {
    // a registry that sends headers and then trickles a body that never ends
    const trickling = await startLocalServer((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"latest":');
    });
    try {
      const p = fakeProject({ deps: { pino: '^10.0.0' }, installed: { pino: '10.0.0' } });
      const started = Date.now();
      const report = await checkUpdates({ ...updatesOptions({}, {}), packageJson: p.packageJson, registryUrl: trickling.url, timeoutMs: 300 });
      expect(Date.now() - started).toBeLessThan(3000);
      expect(report.updates[0]).toMatchObject({ latest: null, type: 'unknown', reason: `no answer from ${trickling.url}/ within 300 ms` });
    } finally {
      await trickling.close();
    }
  });

  it('names the refused connection when nothing listens at the registry', async () => {
    const gone = await startLocalServer(() => undefined);
    await gone.close();
    const p = fakeProject({ deps: { pino: '^10.0.0' }, installed: { pino: '10.0.0' } });
    const report = await checkUpdates({ ...updatesOptions({}, {}), packageJson: p.packageJson, registryUrl: gone.url, timeoutMs: 2000 });
    expect(report.updates).toEqual([
      { name: 'pino', installed: '10.0.0', latest: null, type: 'unknown', packageJson: 'dependencies', reason: expect.stringMatching(new RegExp(`^cannot reach ${gone.url}/: .*ECONNREFUSED`)) },
    ]);
    expect(report.message).toMatch(/^Could not check for updates: cannot reach/);
  });

  it('lists a package unknown to the registry with the reason and still checks the others', async () => {
    const p = fakeProject({ deps: { 'not-published': '^1.0.0', pino: '^10.4.0' }, installed: { pino: '10.4.0' } });
    const report = await checkUpdates({ ...updatesOptions({}, {}), packageJson: p.packageJson, registryUrl: registry.url });
    expect(report.updates).toEqual([
      { name: 'not-published', installed: '1.0.0', latest: null, type: 'unknown', packageJson: 'dependencies', reason: `${registry.url}/ does not know not-published (404)` },
      { name: 'pino', installed: '10.4.0', latest: '10.5.0', type: 'minor', packageJson: 'dependencies' },
    ]);
    expect(report).toMatchObject({ hasUpdates: true, count: 1, message: `Found 1 outdated package; latest version unknown for 1 package: ${registry.url}/ does not know not-published (404)` });
  });
});

describe('the registry npm is configured with', () => {
  let main: LocalServer;
  let mirror: LocalServer;
  let scoped: LocalServer;
  beforeAll(async () => {
    main = await startFakeRegistry({ pino: '10.5.0', '@scope/tool': '9.0.0' });
    mirror = await startFakeRegistry({ pino: '10.6.0' });
    scoped = await startFakeRegistry({ '@scope/tool': '2.0.0' });
  });
  afterAll(async () => {
    await main.close();
    await mirror.close();
    await scoped.close();
  });

  const home = () => mkdtempSync(path.join(os.tmpdir(), 'eventloom-home-'));
  const latestOf = async (packageJson: string, env: NodeJS.ProcessEnv) => {
    const report = await checkUpdates({ ...updatesOptions({}, env), packageJson });
    return { registry: report.registry, latest: Object.fromEntries(report.updates.map((u) => [u.name, u.latest])) };
  };

  it('uses npm_config_registry from the environment, in any case, before the .npmrc files', async () => {
    const p = fakeProject({ deps: { pino: '^10.0.0' }, installed: {} });
    writeFileSync(path.join(p.dir, '.npmrc'), `registry=${main.url}\n`);
    expect(await latestOf(p.packageJson, { HOME: home(), npm_config_registry: mirror.url })).toEqual({ registry: `${mirror.url}/`, latest: { pino: '10.6.0' } });
    expect(await latestOf(p.packageJson, { HOME: home(), NPM_CONFIG_REGISTRY: mirror.url })).toEqual({ registry: `${mirror.url}/`, latest: { pino: '10.6.0' } });
  });

  it("reads the project's .npmrc before the user's, the user's from HOME or npm_config_userconfig", async () => {
    const p = fakeProject({ deps: { pino: '^10.0.0' }, installed: {} });
    const h = home();
    writeFileSync(path.join(h, '.npmrc'), `; the user's mirror\nregistry = "${mirror.url}/"\n`);
    expect(await latestOf(p.packageJson, { HOME: h })).toEqual({ registry: `${mirror.url}/`, latest: { pino: '10.6.0' } });
    const elsewhere = path.join(home(), 'npmrc');
    writeFileSync(elsewhere, 'registry=${MIRROR_URL}\n');
    expect(await latestOf(p.packageJson, { HOME: home(), npm_config_userconfig: elsewhere, MIRROR_URL: mirror.url })).toEqual({ registry: `${mirror.url}/`, latest: { pino: '10.6.0' } });
    writeFileSync(path.join(p.dir, '.npmrc'), `registry=${main.url}\n`);
    expect(await latestOf(p.packageJson, { HOME: h })).toEqual({ registry: `${main.url}/`, latest: { pino: '10.5.0' } });
  });

  it('asks a scope its own registry', async () => {
    const p = fakeProject({ deps: { pino: '^10.0.0', '@scope/tool': '^1.0.0' }, installed: {} });
    writeFileSync(path.join(p.dir, '.npmrc'), `registry=${main.url}\n@scope:registry=${scoped.url}\n`);
    expect(await latestOf(p.packageJson, { HOME: home() })).toEqual({ registry: `${main.url}/`, latest: { pino: '10.5.0', '@scope/tool': '2.0.0' } });
  });

  it('lets a configured registryUrl override npm', async () => {
    const p = fakeProject({ deps: { pino: '^10.0.0' }, installed: {} });
    const report = await checkUpdates({ ...updatesOptions({ updates: { registryUrl: main.url } }, { HOME: home(), npm_config_registry: mirror.url }), packageJson: p.packageJson });
    expect(report.updates[0].latest).toBe('10.5.0');
  });
});

describe('installLatest', () => {
  it('runs npm install with latest specs in the project directory, aliases kept, dev dependencies saved as such', async () => {
    const p = fakeProject({ deps: { pino: '^10.0.0', alias: 'npm:aliased-target@3.0.0' }, devDeps: { vitest: '^4.0.0' }, installed: {} });
    const opts = { ...updatesOptions({}, {}), packageJson: p.packageJson, npmCommand: p.npm };
    await installLatest(opts, trackedPackages(p.packageJson));
    expect(p.calls()).toEqual([
      ['install', 'pino@latest', 'alias@npm:aliased-target@latest'],
      ['install', '--save-dev', 'vitest@latest'],
    ]);
  });

  it('rejects on a failing npm and on its time-out', async () => {
    const failing = fakeProject({ deps: { pino: '^10.0.0' }, installed: {}, exitCode: 1 });
    await expect(installLatest({ ...updatesOptions({}, {}), packageJson: failing.packageJson, npmCommand: failing.npm }, trackedPackages(failing.packageJson))).rejects.toThrow(
      /exited with 1: fake npm output/,
    );
    const slow = fakeProject({ deps: { pino: '^10.0.0' }, installed: {}, sleepSeconds: 5 });
    const started = Date.now();
    await expect(installLatest({ ...updatesOptions({}, {}), packageJson: slow.packageJson, npmCommand: slow.npm, installTimeoutMs: 200 }, trackedPackages(slow.packageJson))).rejects.toThrow(
      /timed out/,
    );
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
