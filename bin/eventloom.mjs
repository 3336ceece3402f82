#!/usr/bin/env node
/**
 * Entry point of `eventloom` / `npx eventloom` / `npm start`: runs the transpiled CLI in dist/. In a
 * checkout of the repository (src/ present) dist/ is rebuilt first when the sources are newer; an
 * installed package ships dist/ only. A TypeScript config is loaded by the CLI through tsx, so the
 * config and the server share one copy of every eventloom module.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// uWS reads its header limit when the addon loads: set it before anything imports uWebSockets.js
process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= '16384';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const distCli = path.join(root, 'dist', 'src', 'cli.js');
if (existsSync(path.join(root, 'src')) && existsSync(path.join(root, 'scripts', 'build.mjs'))) {
  const { newestSourceMtime, buildDist } = await import(pathToFileURL(path.join(root, 'scripts', 'build.mjs')).href);
  if (!existsSync(distCli) || statSync(distCli).mtimeMs < newestSourceMtime()) await buildDist();
}
await import(pathToFileURL(distCli).href);
