#!/usr/bin/env node
/**
 * Bundles the browser console (console/) into dist/console/ with esbuild: one minified ES module
 * (Preact + htm + the console's own modules), its stylesheet and icon. The server serves these files
 * itself at /console (src/http/routes/console.routes.ts), so the console works offline and under
 * `Content-Security-Policy: default-src 'self'`. Run by buildDist (npm install / prepare, npm start).
 */
import { copyFileSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(root, 'console');
const OUT = path.join(root, 'dist', 'console');
const STATIC = ['console.css', 'favicon.svg'];

/** newest modification time among the console sources */
export function newestConsoleMtime() {
  let newest = 0;
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  walk(SRC);
  return newest;
}

export async function buildConsole() {
  const { build } = await import('esbuild');
  mkdirSync(OUT, { recursive: true });
  await build({
    entryPoints: [path.join(SRC, 'src', 'main.js')],
    outfile: path.join(OUT, 'console.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox110', 'safari16'],
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  for (const f of STATIC) copyFileSync(path.join(SRC, f), path.join(OUT, f));
  return OUT;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await buildConsole();
  console.log(`eventloom: built the console into ${path.relative(root, out)}/`);
}
