/**
 * `npm test` must refuse to pass when the code does not type-check: vitest strips types without checking them, so
 * the script runs the type checker first. This runs the script's own first step (as npm would, with the project's
 * node_modules/.bin on the PATH) against a small project holding a type error, and against the same project fixed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const testScript = (): string => JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.test;

function runStep(command: string, source: string): number {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-test-script-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [] }, include: ['*.ts'] }));
  writeFileSync(path.join(dir, 'index.ts'), source);
  try {
    execSync(command, { cwd: dir, stdio: 'pipe', env: { ...process.env, PATH: `${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}` } });
    return 0;
  } catch (err) {
    return (err as { status: number }).status;
  }
}

describe('npm test', () => {
  it('type-checks the project before running the tests', () => {
    const steps = testScript()
      .split('&&')
      .map((s) => s.trim());
    expect(steps.length).toBeGreaterThanOrEqual(2);
    expect(steps.at(-1)).toMatch(/^vitest run\b/);
    const check = steps[0];
    expect(check).toMatch(/^tsc\b/);
    expect(check).toMatch(/--noEmit/);
    // the first step fails on a type error and passes once it is fixed
    expect(runStep(check, 'export const n: number = "not a number";\n')).not.toBe(0);
    expect(runStep(check, 'export const n: number = 42;\n')).toBe(0);
  }, 60_000);
});
