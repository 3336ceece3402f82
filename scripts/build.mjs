#!/usr/bin/env node
/**
 * Builds dist/ with esbuild (ESM, Node 20), so `npm start` and the published package run plain
 * JavaScript: no TypeScript loader in the process. src/ and machines/ are bundled from the package's
 * entry points with code splitting (few files to read at start-up, one copy of each module); the
 * examples are transpiled one file per module. The full build (`npm run build`, run by `prepare` on
 * `npm install` and `npm pack`) also emits the .d.ts files the package's `exports` map points at
 * (tsc, tsconfig.build.json); the console and the API explorer's files go to dist/console/ and
 * dist/explorer/. The quick rebuild before `npm start` when dist/ is older than the
 * sources skips the declarations. Type checking is `npm run typecheck`'s job, not the build's.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConsole, newestConsoleMtime } from './build-console.mjs';
import { buildExplorer } from './build-explorer.mjs';

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

/** What a build is made from: the sources, the console and the build scripts themselves. */
const STAMPED = [...SOURCES, 'console'];
const STAMPED_FILES = ['scripts/build.mjs', 'scripts/build-console.mjs', 'scripts/build-explorer.mjs'];
/** Written after each build; bin/eventloom.mjs compares the tree with it instead of importing this script. */
export const STAMP_FILE = path.join(root, 'dist', 'build-stamp.json');

/**
 * Every directory and file the build reads, with its modification time. A file added, removed or
 * renamed changes its directory's time, an edit the file's, so equal times mean dist/ is current.
 */
function sourceEntries() {
  const entries = [];
  const walk = (rel) => {
    entries.push([rel, statSync(path.join(root, rel)).mtimeMs]);
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else entries.push([r, statSync(path.join(root, r)).mtimeMs]);
    }
  };
  for (const d of STAMPED) walk(d);
  for (const f of STAMPED_FILES) entries.push([f, statSync(path.join(root, f)).mtimeMs]);
  return entries;
}

/** Removes the JavaScript of an earlier build under `dir` (declarations stay), so no stale chunk is left behind. */
function removeJs(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) removeJs(p);
    else if (entry.name.endsWith('.js')) rmSync(p);
  }
}

/**
 * The package's entry points: the public API (`eventloom`), `eventloom/testing` and the CLI. They are
 * bundled together with code splitting, so a user's config (which imports `eventloom`) and the server
 * the CLI starts share one copy of every module, and a feature loaded with `import()` (the PostgreSQL
 * store, MCP clients, the OTLP exporter, the offline tools) becomes a chunk read only when used.
 */
const ENTRY_POINTS = { 'src/index': 'src/index.ts', 'src/testing/index': 'src/testing/index.ts', 'src/cli/index': 'src/cli/index.ts' };

/**
 * rxjs's `node` export is its CommonJS build, whose index loads all of its ~220 files; its ES module
 * build lets the bundle keep only the operators the code uses. rxjs is internal (no exported type or
 * value carries it), so bundling it changes nothing a user sees.
 */
const rxjsAsEsm = {
  name: 'rxjs-esm',
  setup(b) {
    b.onResolve({ filter: /^rxjs$/ }, () => ({ path: path.join(root, 'node_modules', 'rxjs', 'dist', 'esm', 'index.js') }));
  },
};

/**
 * CommonJS packages the server imports are loaded with `require` (through `createRequire`, set up at
 * the top of each output file) instead of `import`: Node would otherwise scan each one's source for
 * its export names and wrap it as an ES module, which costs ~40 ms of a start. The module is the same
 * either way (Node's CommonJS cache), so a config that imports one of them shares it.
 */
const CJS_PACKAGES = ['pino', 'xstate', '@xstate/store', 'classic-level', 'uWebSockets.js', 'pg'];
const requireCjsPackages = {
  name: 'require-cjs-packages',
  setup(b) {
    const filter = new RegExp(`^(?:${CJS_PACKAGES.map((p) => p.replace(/[./]/g, '\\$&')).join('|')})$`);
    b.onResolve({ filter }, (args) =>
      args.kind === 'import-statement' ? { path: args.path, namespace: 'cjs-package' } : args.kind === 'require-call' ? { path: args.path, external: true } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'cjs-package' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};
const REQUIRE_BANNER = "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);";

/** `declarations`: a clean build with .d.ts files; without, the JavaScript is rewritten in place (fast). */
export async function buildDist({ declarations = false } = {}) {
  // esbuild is loaded only when a build runs, so the staleness check at start-up stays cheap
  const { build } = await import('esbuild');
  // taken before building: a source edited during the build makes the next start build again
  const entries = sourceEntries();
  const outdir = path.join(root, 'dist');
  if (declarations) rmSync(outdir, { recursive: true, force: true });
  else for (const s of ['src', 'machines']) removeJs(path.join(outdir, s));
  const common = { outdir, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' };
  await build({
    ...common,
    entryPoints: Object.fromEntries(Object.entries(ENTRY_POINTS).map(([out, src]) => [out, path.join(root, src)])),
    bundle: true,
    splitting: true,
    chunkNames: 'src/chunks/[name]-[hash]',
    // dependencies stay packages of their own (zod and fast-check are peers the user's code shares)
    packages: 'external',
    plugins: [rxjsAsEsm, requireCjsPackages],
    banner: { js: REQUIRE_BANNER },
  });
  // the examples stay one file per module: the bundled example config imports `eventloom` like a user's
  const examples = tsFiles(path.join(root, 'examples'));
  await build({ ...common, entryPoints: examples, outbase: root, bundle: false });
  // the browser console (console/) is bundled into dist/console/, served at /console
  await buildConsole();
  // the API explorer's files (Swagger UI) into dist/explorer/, served at /ui
  buildExplorer();
  if (declarations) {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  }
  writeFileSync(STAMP_FILE, JSON.stringify({ entries }));
  return SOURCES.reduce((n, s) => n + tsFiles(path.join(root, s)).length, 0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const n = await buildDist({ declarations: true });
  console.log(`eventloom: built ${n} modules and their declarations into dist/`);
}
