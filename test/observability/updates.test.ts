/**
 * The update check and installer: versions compared with the registry's latest tag, aliases resolved, an
 * unreachable registry failing within the budget, installs run through the (injected) npm command.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkUpdates, installLatest, trackedPackages, updateType, updatesOptions, isValidPackageName, type UpdatesOptions } from '../../src/observability/updates.js';
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

  it('fails quickly when the registry does not answer within the budget', async () => {
    const hanging = await startLocalServer(() => undefined);
    try {
      const p = project();
      const started = Date.now();
      await expect(checkUpdates({ ...updatesOptions({}, {}), packageJson: p.packageJson, registryUrl: hanging.url, timeoutMs: 300 })).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await hanging.close();
    }
  });

  it('fails when a package is unknown to the registry', async () => {
    const p = fakeProject({ deps: { 'not-published': '^1.0.0' }, installed: {} });
    await expect(checkUpdates({ ...updatesOptions({}, {}), packageJson: p.packageJson, registryUrl: registry.url })).rejects.toThrow(/404/);
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
    await expect(installLatest({ ...updatesOptions({}, {}), packageJson: failing.packageJson, npmCommand: failing.npm }, trackedPackages(failing.packageJson))).rejects.toThrow(/exited with 1: fake npm output/);
    const slow = fakeProject({ deps: { pino: '^10.0.0' }, installed: {}, sleepSeconds: 5 });
    const started = Date.now();
    await expect(installLatest({ ...updatesOptions({}, {}), packageJson: slow.packageJson, npmCommand: slow.npm, installTimeoutMs: 200 }, trackedPackages(slow.packageJson))).rejects.toThrow(/timed out/);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
