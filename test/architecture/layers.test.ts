/**
 * The import direction of docs/design-notes.md "The projection engine and the layers", checked by dependency-cruiser with the rules in
 * .dependency-cruiser.cjs: cli/main → http → domains → projections → runtime → log, machines pure,
 * no cycles. The second test plants violations in a scratch tree to prove the rules bite.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
// the package's exports map hides its bin, which is where npm installed the dev dependency
const bin = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const config = path.join(root, '.dependency-cruiser.cjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

function cruise(cwd: string, dirs: string[]): Violation[] {
  const out = execFileSync(process.execPath, [bin, ...dirs, '--config', config, '--output-type', 'json'], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

describe('layers', () => {
  it('has no import against the direction and no cycle in src and machines', () => {
    const violations = cruise(root, ['src', 'machines']).map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
    expect(violations).toEqual([]);
  });

  it('reports a domain importing the edge, a cycle, and a machine importing I/O', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-layers-'));
    try {
      const put = (file: string, text: string) => {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), text);
      };
      put('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: false } }));
      put('src/http/server.ts', 'export const edge = 1;\n');
      put('src/agents/routes.ts', "import { edge } from '../http/server.js';\nexport const a = edge;\n");
      put('src/memory/a.ts', "import { b } from './b.js';\nexport const a = () => b;\n");
      put('src/memory/b.ts', "import { a } from './a.js';\nexport const b = () => a;\n");
      put('machines/m.machine.ts', "import { a } from '../src/memory/a.js';\nexport const m = a;\n");
      const rules = new Set(cruise(dir, ['src', 'machines']).map((v) => v.rule.name));
      expect([...rules].sort()).toEqual(['domains-below-the-edge', 'machines-are-pure', 'no-cycles']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a store importing another store, and a store-neutral log file importing a store', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-layers-'));
    try {
      const put = (file: string, text: string) => {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), text);
      };
      put('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: false } }));
      put('src/log/types.ts', 'export const t = 1;\n');
      put('src/log/level/level-log.ts', "import { t } from '../types.js';\nexport const level = t;\n");
      put('src/log/pg/pg-log.ts', "import { level } from '../level/level-log.js';\nexport const pg = level;\n");
      put('src/log/integrity.ts', "import { pg } from './pg/pg-log.js';\nexport const check = pg;\n");
      put('src/log/open.ts', "import { pg } from './pg/pg-log.js';\nimport { level } from './level/level-log.js';\nexport const open = [pg, level];\n");
      const violations = cruise(dir, ['src']).map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
      expect(violations.sort()).toEqual([
        'log-core-is-store-neutral: src/log/integrity.ts → src/log/pg/pg-log.ts',
        'stores-side-by-side: src/log/pg/pg-log.ts → src/log/level/level-log.ts',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
