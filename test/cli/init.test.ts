/**
 * `eventloom init`: the scaffold's files, never overwriting what is there, and a scaffolded config that
 * really serves its agent (which calls its tool through the demo model), its tool and its workflow
 * (suspend, then resume) on the real server.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONFIG_TEMPLATE, scaffold } from '../../src/cli-init.js';
import { loadConfig } from '../../src/config/define-config.js';
import { VERSION } from '../../src/version.js';
import { api, startTestServer } from '../helpers/server.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
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
      dependencies: { eventloom: `^${VERSION}`, zod: expect.stringMatching(/^\^4\./) },
      devDependencies: { typescript: expect.any(String), '@types/node': expect.any(String), vitest: expect.any(String), 'fast-check': expect.any(String) },
    });
    expect(JSON.parse(readFileSync(path.join(dir, 'tsconfig.json'), 'utf8')).compilerOptions).toMatchObject({ module: 'NodeNext', strict: true, noEmit: true });
    expect(r.next).toEqual(['cd my-app && npm install', 'npm start']);
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
    expect(pkg.dependencies.eventloom).toBe(`^${VERSION}`);
    expect(pkg.type).toBe('module');
    expect(r.added).toEqual(['type', 'scripts.typecheck', 'scripts.test', 'dependencies.eventloom', 'devDependencies.typescript', 'devDependencies.@types/node', 'devDependencies.vitest', 'devDependencies.fast-check']);
    expect(r.next).toEqual(['npm install', 'npm start']);

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
