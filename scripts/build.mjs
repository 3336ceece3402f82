#!/usr/bin/env node
/**
 * Transpiles src/, machines/ and examples/ to dist/ (same layout, ESM, Node 20) with esbuild, so
 * `npm start` and the published package run plain JavaScript: no TypeScript loader in the process means
 * a faster start and a smaller heap. The full build (`npm run build`, run by `prepare` on `npm install`
 * and `npm pack`) also emits the .d.ts files the package's `exports` map points at (tsc,
 * tsconfig.build.json); the quick rebuild before `npm start` when dist/ is older than the sources
 * transpiles only. Type checking is `npm run typecheck`'s job, not the build's.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConsole, newestConsoleMtime } from './build-console.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = ['src', 'machines', 'examples'];

function tsFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...tsFiles(p));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** newest modification time among the sources, to tell whether dist/ is stale */
export function newestSourceMtime() {
  let newest = 0;
  for (const s of SOURCES) for (const f of tsFiles(path.join(root, s))) newest = Math.max(newest, statSync(f).mtimeMs);
  return Math.max(newest, newestConsoleMtime());
}

/** `declarations`: a clean build with .d.ts files; without, the JavaScript is rewritten in place (fast). */
export async function buildDist({ declarations = false } = {}) {
  // esbuild is loaded only when a build runs, so the staleness check at start-up stays cheap
  const { build } = await import('esbuild');
  if (declarations) rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  const entryPoints = SOURCES.flatMap((s) => tsFiles(path.join(root, s)));
  await build({
    entryPoints,
    outdir: path.join(root, 'dist'),
    outbase: root,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    bundle: false,
    logLevel: 'warning',
  });
  // the browser console (console/) is bundled into dist/console/, served at /console
  await buildConsole();
  if (declarations) {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  }
  return entryPoints.length;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const n = await buildDist({ declarations: true });
  console.log(`eventloom: built ${n} modules and their declarations into dist/`);
}
