/**
 * The import direction, checked by dependency-cruiser with the rules of .dependency-cruiser.cjs
 * (built from the layer order of scripts/layer-order.cjs): every folder imports only its layer and
 * those below, domains import no other domain, machines are pure, no cycles. Over the same cruise,
 * the folder-level graph has no arrow back up and no two folders importing each other, and the
 * picture in docs/design-notes.md is the one the code draws. The scratch-tree test plants
 * violations to prove the rules bite.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cruise, folderGraph, measure, readNotes, render, withPicture } from '../../scripts/layers.mjs';

const root = path.resolve(import.meta.dirname, '../..');
// one cruise of the repository serves the three checks of it (it takes seconds)
let repository: ReturnType<typeof cruise> | undefined;
const cruised = () => (repository ??= cruise(root, ['src', 'machines']));

describe('layers', () => {
  it('has no import against the direction, none between domains and no cycle in src and machines', () => {
    expect(cruised().summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
  });

  it('has, folder by folder, no arrow back up the layers and no two folders importing each other', () => {
    const m = measure(folderGraph(cruised()));
    expect(m.upward.flatMap((a) => a.files)).toEqual([]);
    expect(m.betweenDomains.flatMap((a) => a.files)).toEqual([]);
    expect(m.mutual).toEqual([]);
  });

  it('keeps the layer picture of the design notes as the code draws it (npm run layers redraws it)', () => {
    const notes = readNotes();
    expect(withPicture(notes, render(folderGraph(cruised())))).toBe(notes);
  });

  it('reports a domain importing the edge or another domain, a cycle, a machine importing I/O, and a leaf importing a layer', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-layers-'));
    try {
      const put = (file: string, text: string) => {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), text);
      };
      put('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: false } }));
      put('src/http/server.ts', 'export const edge = 1;\n');
      put('src/agents/routes.ts', "import { edge } from '../http/server.js';\nexport const a = edge;\n");
      put('src/tools/catalog.ts', "import { a } from '../agents/routes.js';\nexport const t = a;\n");
      put('src/memory/a.ts', "import { b } from './b.js';\nexport const a = () => b;\n");
      put('src/memory/b.ts', "import { a } from './a.js';\nexport const b = () => a;\n");
      put('src/kernel/clock.ts', "import { a } from '../memory/a.js';\nexport const c = a;\n");
      put('machines/m.machine.ts', "import { a } from '../src/memory/a.js';\nexport const m = a;\n");
      const rules = new Set(cruise(dir, ['src', 'machines']).summary.violations.map((v) => v.rule.name));
      expect([...rules].sort()).toEqual(['domains-are-peers', 'domains-imports-only-below', 'kernel-imports-only-below', 'machines-are-pure', 'no-cycles']);
      // a domain importing another is not an arrow up, so the folder-level measure names it on its own
      const m = measure(folderGraph(cruise(dir, ['src'])));
      expect(m.betweenDomains.map((a) => `${a.from} → ${a.to}`)).toEqual(['tools → agents']);
      expect(m.upward.map((a) => `${a.from} → ${a.to}`).sort()).toEqual(['agents → http', 'kernel → memory']);
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
      const violations = cruise(dir, ['src']).summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
      expect(violations.sort()).toEqual(['log-core-is-store-neutral: src/log/integrity.ts → src/log/pg/pg-log.ts', 'stores-side-by-side: src/log/pg/pg-log.ts → src/log/level/level-log.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('counts two folders importing each other as a mutual pair', () => {
    const graph = new Map([
      ['agents', new Map([['tools', ['src/agents/a.ts → src/tools/b.ts']]])],
      ['tools', new Map([['agents', ['src/tools/b.ts → src/agents/a.ts']]])],
    ]);
    const m = measure(graph);
    expect(m.mutual).toEqual(['agents ↔ tools']);
    expect(m.upward).toEqual([]);
  });
});
