#!/usr/bin/env node
/**
 * Entry point of `eventloom` / `npx eventloom` / `npm start`: runs the bundled CLI in dist/. In a
 * checkout of the repository (src/ present) dist/ is rebuilt first when the sources changed since the
 * last build; an installed package ships dist/ only. A TypeScript config is compiled by the CLI
 * (src/config/compile-config.ts, tsx as the fallback) so that the config and the server share one copy
 * of every eventloom module.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// uWS reads its header limit when the addon loads: set it before anything imports uWebSockets.js
process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= '16384';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const distCli = path.join(root, 'dist', 'src', 'cli', 'index.js');

/**
 * dist/ is current when every directory and file the last build read still has the modification time
 * that build recorded in dist/build-stamp.json (scripts/build.mjs). A few hundred stats, no directory
 * walk and no import of the build script: this runs before every start.
 */
function distIsCurrent() {
  let entries;
  try {
    ({ entries } = JSON.parse(readFileSync(path.join(root, 'dist', 'build-stamp.json'), 'utf8')));
  } catch {
    return false;
  }
  for (const [rel, mtimeMs] of entries) if (statSync(path.join(root, rel), { throwIfNoEntry: false })?.mtimeMs !== mtimeMs) return false;
  return existsSync(distCli);
}

if (existsSync(path.join(root, 'src')) && existsSync(path.join(root, 'scripts', 'build.mjs')) && !distIsCurrent()) {
  const { buildDist } = await import(pathToFileURL(path.join(root, 'scripts', 'build.mjs')).href);
  await buildDist();
}
await import(pathToFileURL(distCli).href);
