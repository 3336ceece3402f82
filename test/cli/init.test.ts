/**
 * `eventloom init`: the scaffold's files, never overwriting what is there (npm's placeholder test
 * script aside), an eventloom dependency that names what this copy was installed from (eventloom is
 * not on the npm registry yet), and a scaffolded config that really serves its agent (which calls its
 * tool through the demo model), its tool and its workflow (suspend, then resume) on the real server.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONFIG_TEMPLATE, NPM_PLACEHOLDER_TEST, scaffold } from '../../src/cli/init.js';
import { loadConfig } from '../../src/config/define-config.js';
import { VERSION } from '../../src/version.js';
import { api, startTestServer } from '../helpers/server.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** the dependency a project in `dir` gets from init run in this checkout */
const checkoutSpec = (dir: string) => `file:${path.relative(dir, ROOT)}`;
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'eventloom-init-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('eventloom init', () => {
  it('writes the config, a property test of its workflow, tsconfig, .gitignore and a package.json with start, typecheck and test scripts, then names the next two commands', () => {
    const cwd = tmp();
    const r = scaffold('my-app', cwd);
    const dir = path.join(cwd, 'my-app');
    expect(r.written.sort()).toEqual(['.gitignore', 'eventloom.config.ts', 'expense-approval.prop.test.ts', 'package.json', 'tsconfig.json']);
    expect(readFileSync(path.join(dir, 'expense-approval.prop.test.ts'), 'utf8')).toContain("import { expenseApproval } from './eventloom.config.js';");
    expect(readFileSync(path.join(dir, 'eventloom.config.ts'), 'utf8')).toBe(CONFIG_TEMPLATE);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({
      name: 'my-app',
      type: 'module',
      scripts: { start: 'eventloom start', typecheck: 'tsc --noEmit', test: 'vitest run' },
      dependencies: { eventloom: checkoutSpec(dir), zod: expect.stringMatching(/^\^4\./) },
      devDependencies: { typescript: expect.any(String), '@types/node': expect.any(String), vitest: expect.any(String), 'fast-check': expect.any(String) },
    });
    expect(JSON.parse(readFileSync(path.join(dir, 'tsconfig.json'), 'utf8')).compilerOptions).toMatchObject({ module: 'NodeNext', strict: true, noEmit: true });
    expect(r.next).toEqual(['cd my-app && npm install', 'npm start']);
    expect(r.testHint).toBe('npm test runs the property test of expense-approval (expense-approval.prop.test.ts)');
  });

  it('never overwrites an existing file and only adds what an existing package.json lacks', () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'eventloom.config.ts'), '// mine\n');
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'mine', scripts: { start: 'node server.js' }, dependencies: { zod: '4.2.0' } }));
    const r = scaffold('.', dir);
    expect(readFileSync(path.join(dir, 'eventloom.config.ts'), 'utf8')).toBe('// mine\n');
    expect(r.skipped).toContain('eventloom.config.ts');
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg.scripts).toEqual({ start: 'node server.js', typecheck: 'tsc --noEmit', test: 'vitest run' });
    expect(pkg.dependencies.zod).toBe('4.2.0');
    expect(pkg.dependencies.eventloom).toBe(checkoutSpec(dir));
    expect(pkg.type).toBe('module');
    expect(r.added).toEqual([
      'type',
      'scripts.typecheck',
      'scripts.test',
      'dependencies.eventloom',
      'devDependencies.typescript',
      'devDependencies.@types/node',
      'devDependencies.vitest',
      'devDependencies.fast-check',
    ]);
    expect(r.next).toEqual(['npm install', 'npm start']);
    expect(r.replaced).toEqual([]);

    const again = scaffold('.', dir);
    expect(again.written).toEqual([]);
    expect(again.added).toEqual([]);
    expect(again.skipped.sort()).toEqual(['.gitignore', 'eventloom.config.ts', 'expense-approval.prop.test.ts', 'package.json', 'tsconfig.json']);
  });

  it('refuses a package.json that is not JSON instead of replacing it', () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'package.json'), '{ broken');
    expect(() => scaffold('.', dir)).toThrow(/package.json is not valid JSON/);
    expect(readFileSync(path.join(dir, 'package.json'), 'utf8')).toBe('{ broken');
    // nothing is written before the project is understood
    expect(existsSync(path.join(dir, 'eventloom.config.ts'))).toBe(false);
  });

  it('keeps a CommonJS project CommonJS and writes the config as an .mts module', () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'legacy', type: 'commonjs' }));
    const r = scaffold('.', dir);
    expect(r.written).toContain('eventloom.config.mts');
    expect(existsSync(path.join(dir, 'eventloom.config.ts'))).toBe(false);
    expect(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).type).toBe('commonjs');
    expect(JSON.parse(readFileSync(path.join(dir, 'tsconfig.json'), 'utf8')).include).toEqual(['eventloom.config.mts', '*.test.ts', '*.test.mts', 'src']);
  });

  it("replaces the failing test script npm init writes with vitest, and keeps a project's own test script", () => {
    const dir = tmp();
    // what `npm init -y` writes with npm 11
    const npmInit = { name: 'ni', version: '1.0.0', description: '', main: 'index.js', scripts: { test: NPM_PLACEHOLDER_TEST }, keywords: [], author: '', license: 'ISC', type: 'commonjs' };
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify(npmInit, null, 2));
    const r = scaffold('.', dir);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg.scripts).toEqual({ test: 'vitest run', start: 'eventloom start', typecheck: 'tsc --noEmit' });
    expect(r.replaced).toEqual(['scripts.test']);
    expect(r.added).not.toContain('scripts.test');
    expect(r.testHint).toBe('npm test runs the property test of expense-approval (expense-approval.prop.test.mts)');

    const own = tmp();
    writeFileSync(path.join(own, 'package.json'), JSON.stringify({ name: 'own', type: 'module', scripts: { test: 'node --test' } }));
    const kept = scaffold('.', own);
    expect(JSON.parse(readFileSync(path.join(own, 'package.json'), 'utf8')).scripts.test).toBe('node --test');
    expect(kept.replaced).toEqual([]);
    expect(kept.testHint).toBe('npx vitest run expense-approval.prop.test.ts runs the property test of expense-approval (your own test script is kept)');
  });

  describe('the eventloom dependency it writes', () => {
    /** a copy of eventloom installed in `project`'s node_modules, as npm lays it out */
    function installedCopy(project: string, lock: Record<string, unknown> | undefined, where: 'package-lock.json' | 'node_modules/.package-lock.json' = 'node_modules/.package-lock.json') {
      const root = path.join(project, 'node_modules', 'eventloom');
      mkdirSync(root, { recursive: true });
      writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'eventloom', version: VERSION, peerDependencies: { zod: '^4.1.0' } }));
      if (lock) writeFileSync(path.join(project, where), JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/eventloom': lock } }));
      return root;
    }

    it('is the checkout this eventloom runs from, as a path relative to the new project', () => {
      const cwd = tmp();
      const r = scaffold('apps/my-app', cwd);
      const dir = path.join(cwd, 'apps', 'my-app');
      expect(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).dependencies.eventloom).toBe(checkoutSpec(dir));
      expect(r.notes).toEqual([`eventloom is not on the npm registry yet: package.json depends on ${checkoutSpec(dir)}, the eventloom checkout this eventloom was installed from.`]);
    });

    it('is the tarball a project installed it from, found through the lockfile and rewritten relative to the new project', () => {
      const base = tmp();
      writeFileSync(path.join(base, `eventloom-${VERSION}.tgz`), 'tarball');
      const project = path.join(base, 'project');
      const packageRoot = installedCopy(project, { version: VERSION, resolved: `file:../eventloom-${VERSION}.tgz`, integrity: 'sha512-x' });
      const r = scaffold('my-app', project, { packageRoot });
      expect(JSON.parse(readFileSync(path.join(project, 'my-app', 'package.json'), 'utf8')).dependencies.eventloom).toBe(`file:../../eventloom-${VERSION}.tgz`);
      expect(r.notes[0]).toBe(`eventloom is not on the npm registry yet: package.json depends on file:../../eventloom-${VERSION}.tgz, the tarball this eventloom was installed from.`);
    });

    it("is the tarball npx installed it from into its cache (the cache's lockfile holds the path from the cache)", () => {
      const base = tmp();
      const tarball = path.join(base, 'downloads', `eventloom-${VERSION}.tgz`);
      mkdirSync(path.dirname(tarball));
      writeFileSync(tarball, 'tarball');
      const npxDir = path.join(base, '.npm', '_npx', '30acd06a90beda28');
      const packageRoot = installedCopy(npxDir, { version: VERSION, resolved: `file:${path.relative(npxDir, tarball)}` }, 'package-lock.json');
      scaffold('my-app', path.join(base, 'work'), { packageRoot });
      expect(JSON.parse(readFileSync(path.join(base, 'work', 'my-app', 'package.json'), 'utf8')).dependencies.eventloom).toBe(`file:../../downloads/eventloom-${VERSION}.tgz`);
    });

    it('is a version range when the lockfile says it came from a registry, with nothing to add', () => {
      const project = tmp();
      const packageRoot = installedCopy(project, { version: VERSION, resolved: `https://registry.npmjs.org/eventloom/-/eventloom-${VERSION}.tgz` });
      const r = scaffold('my-app', project, { packageRoot });
      expect(JSON.parse(readFileSync(path.join(project, 'my-app', 'package.json'), 'utf8')).dependencies.eventloom).toBe(`^${VERSION}`);
      expect(r.notes).toEqual([]);
    });

    it("falls back to the project's file: declaration, and without any evidence says how to point the dependency at a tarball or checkout", () => {
      const project = tmp();
      const packageRoot = installedCopy(project, undefined);
      writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'p', dependencies: { eventloom: 'file:vendor/eventloom' } }));
      mkdirSync(path.join(project, 'vendor', 'eventloom'), { recursive: true });
      scaffold('my-app', project, { packageRoot });
      expect(JSON.parse(readFileSync(path.join(project, 'my-app', 'package.json'), 'utf8')).dependencies.eventloom).toBe('file:../vendor/eventloom');

      const bare = tmp();
      const r = scaffold('my-app', bare, { packageRoot: installedCopy(bare, undefined) });
      expect(JSON.parse(readFileSync(path.join(bare, 'my-app', 'package.json'), 'utf8')).dependencies.eventloom).toBe(`^${VERSION}`);
      expect(r.notes[0]).toMatch(/^eventloom is not on the npm registry yet, and where this copy was installed from could not be told: before `npm install`, set dependencies.eventloom/);
    });

    it('is not written over a project that already declares eventloom', () => {
      const dir = tmp();
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'p', type: 'module', dependencies: { eventloom: 'file:../eventloom-0.1.0.tgz' } }));
      const r = scaffold('.', dir);
      expect(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).dependencies.eventloom).toBe('file:../eventloom-0.1.0.tgz');
      expect(r.notes).toEqual([]);
    });
  });

  it('scaffolds a config whose agent, tool and workflow work on the real server', async () => {
    const dir = tmp();
    scaffold('.', dir);
    // the scaffold imports zod and eventloom as a user's project does: give it this checkout's packages
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    const config = await loadConfig(path.join(dir, 'eventloom.config.ts'));
    const t = await startTestServer(config);
    try {
      const text = await api(`${t.url}/agents/assistant/text`, { method: 'POST', json: { input: 'Please convert 100 from EUR to USD' } });
      expect(text.status).toBe(200);
      expect(text.body.data.text).toBe('convertCurrency returned {"amount":107.3,"currency":"USD"}.');

      const tool = await api(`${t.url}/tools/convertCurrency/execute`, { method: 'POST', json: { input: { amount: 10, from: 'GBP', to: 'EUR' } } });
      expect(tool.body.data).toMatchObject({ toolName: 'convertCurrency', result: { amount: 11.63, currency: 'EUR' } });

      const run = await api(`${t.url}/workflows/expense-approval/execute`, { method: 'POST', json: { input: { description: 'Train', amount: 107.3, currency: 'USD' } } });
      expect(run.body.data).toMatchObject({ status: 'suspended', suspension: { suspendData: { amountEur: 100 } } });
      const resumed = await api(`${t.url}/workflows/expense-approval/executions/${run.body.data.executionId}/resume`, { method: 'POST', json: { resumeData: { approved: true } } });
      expect(resumed.body.data).toMatchObject({ status: 'completed', result: { status: 'approved', amountEur: 100 } });
    } finally {
      await t.close();
    }
  });
});
