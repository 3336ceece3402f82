/**
 * Prepares what `npm run bench:peers` runs: installs bench/peers (chart tools) and
 * bench/peers/voltagent (the VoltAgent peer, pinned versions) with `npm install` when their
 * node_modules is missing, transpiles the peer server to bench/peers/voltagent/dist when its
 * sources are newer, and rebuilds eventloom's dist/ when stale, so no timed start-up pays for a
 * build. Nothing here is timed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const PEERS_DIR = path.join(ROOT, 'bench', 'peers');
export const VOLTAGENT_DIR = path.join(PEERS_DIR, 'voltagent');
export const VOLTAGENT_SERVER = path.join(VOLTAGENT_DIR, 'dist', 'server.js');

function npmInstall(dir: string): void {
  console.log(`installing ${path.relative(ROOT, dir)} (npm install, first use only)…`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' });
}

function peerSources(): string[] {
  return readdirSync(VOLTAGENT_DIR)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(VOLTAGENT_DIR, f));
}

async function buildPeerServer(): Promise<void> {
  const sources = peerSources();
  const newest = Math.max(...sources.map((f) => statSync(f).mtimeMs));
  if (existsSync(VOLTAGENT_SERVER) && statSync(VOLTAGENT_SERVER).mtimeMs >= newest) return;
  const { build } = await import('esbuild');
  await build({
    entryPoints: sources,
    outdir: path.join(VOLTAGENT_DIR, 'dist'),
    format: 'esm',
    platform: 'node',
    target: 'node20',
    bundle: false,
    logLevel: 'warning',
  });
}

async function buildEventloom(): Promise<void> {
  const script = pathToFileURL(path.join(ROOT, 'scripts', 'build.mjs')).href;
  const { newestSourceMtime, buildDist } = (await import(script)) as { newestSourceMtime(): number; buildDist(): Promise<number> };
  const cli = path.join(ROOT, 'dist', 'src', 'cli', 'index.js');
  if (!existsSync(cli) || statSync(cli).mtimeMs < newestSourceMtime()) await buildDist();
}

export interface PeerVersions {
  eventloom: string;
  '@voltagent/core': string;
  '@voltagent/server-hono': string;
  ai: string;
  vega: string;
  'vega-lite': string;
}

function installedVersion(dir: string, pkg: string): string {
  const file = path.join(dir, 'node_modules', pkg, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/** Installs and builds what is missing; returns the versions actually installed. */
export async function preparePeers(): Promise<PeerVersions> {
  if (!existsSync(path.join(PEERS_DIR, 'node_modules'))) npmInstall(PEERS_DIR);
  if (!existsSync(path.join(VOLTAGENT_DIR, 'node_modules'))) npmInstall(VOLTAGENT_DIR);
  await buildPeerServer();
  await buildEventloom();
  return {
    eventloom: (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    '@voltagent/core': installedVersion(VOLTAGENT_DIR, '@voltagent/core'),
    '@voltagent/server-hono': installedVersion(VOLTAGENT_DIR, '@voltagent/server-hono'),
    ai: installedVersion(VOLTAGENT_DIR, 'ai'),
    vega: installedVersion(PEERS_DIR, 'vega'),
    'vega-lite': installedVersion(PEERS_DIR, 'vega-lite'),
  };
}
