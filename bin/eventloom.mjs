#!/usr/bin/env node
/**
 * Entry point of `eventloom` / `npm start`. Runs the transpiled server in dist/ (rebuilt first when
 * the sources are newer) unless the config is a TypeScript file outside the bundled examples, in
 * which case the TypeScript sources run under tsx so the config and the server share one copy of
 * every module.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// uWS reads its header limit when the addon loads: set it before anything imports uWebSockets.js
process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= '16384';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const configIdx = args.findIndex((a) => a === '--config' || a.startsWith('--config='));
const configArg = configIdx < 0 ? undefined : args[configIdx].includes('=') ? args[configIdx].split('=').slice(1).join('=') : args[configIdx + 1];
const localConfig = path.resolve('eventloom.config.ts');
const userTsConfig = (configArg && /\.(c|m)?ts$/.test(configArg)) || (!configArg && existsSync(localConfig));

if (userTsConfig) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(path.join(root, 'src', 'cli.ts')).href);
} else {
  const distCli = path.join(root, 'dist', 'src', 'cli.js');
  const { newestSourceMtime, buildDist } = await import(pathToFileURL(path.join(root, 'scripts', 'build.mjs')).href);
  if (!existsSync(distCli) || statSync(distCli).mtimeMs < newestSourceMtime()) await buildDist();
  await import(pathToFileURL(distCli).href);
}
