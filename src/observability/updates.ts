/**
 * Update check and install of the server's own packages (GET/POST /updates, docs/api-reference.md "Logs, observability and updates"): the registry
 * packages named in the project `package.json` (`dependencies`, `devDependencies`; npm aliases resolved, local
 * and git specs skipped) are compared with the `latest` dist-tag of the registry npm is configured with
 * (npm-registry.ts; a configured `registryUrl` overrides it). All lookups together are bounded by one deadline
 * (5 s default) that also holds when a lookup ignores its abort (a DNS lookup cannot be cancelled): a package
 * whose lookup failed or did not finish in time is listed with `latest: null`, `type: 'unknown'` and the
 * reason, so an offline host answers the installed versions promptly instead of failing. Installs run
 * `<npm> install <name>@latest …` in the project directory with a time-out; the command is injectable.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { findProjectPackageJson, PACKAGE_ROOT } from '../package-root.js';
import { npmRegistries, registryFor, type NpmRegistries } from './npm-registry.js';

export interface UpdatesOptions {
  /** the project package.json (default: the user's project when installed as a dependency, else eventloom's own) */
  packageJson: string;
  /** registry base URL for every package; unset: the registry npm is configured with for the project */
  registryUrl?: string;
  /** the environment npm's configuration is read from (`npm_config_*`, HOME) */
  env: NodeJS.ProcessEnv;
  /** budget of one whole check (ms) */
  timeoutMs: number;
  /** the npm executable */
  npmCommand: string;
  /** budget of one install (ms) */
  installTimeoutMs: number;
}

export const DEFAULT_PACKAGE_JSON = findProjectPackageJson(PACKAGE_ROOT);

export function updatesOptions(section: unknown, env: NodeJS.ProcessEnv): UpdatesOptions {
  const s = (section && typeof section === 'object' ? (section as { updates?: Partial<UpdatesOptions> }).updates : undefined) ?? {};
  return {
    packageJson: s.packageJson ?? DEFAULT_PACKAGE_JSON,
    registryUrl: s.registryUrl,
    env,
    timeoutMs: s.timeoutMs ?? 5000,
    npmCommand: s.npmCommand ?? 'npm',
    installTimeoutMs: s.installTimeoutMs ?? 5 * 60_000,
  };
}

/** The registries of one check: the configured override, else npm's configuration for the project. */
function registriesOf(opts: UpdatesOptions): NpmRegistries {
  if (opts.registryUrl) return { registry: opts.registryUrl.endsWith('/') ? opts.registryUrl : `${opts.registryUrl}/`, scopes: {}, source: 'config' };
  return npmRegistries(path.dirname(opts.packageJson), opts.env);
}

export interface TrackedPackage {
  name: string;
  /** the name on the registry (differs for npm aliases) */
  registryName: string;
  section: 'dependencies' | 'devDependencies';
  range: string;
}

export interface PackageUpdate {
  name: string;
  installed: string;
  /** null when the registry did not tell (see `reason`) */
  latest: string | null;
  type: 'major' | 'minor' | 'patch' | 'latest' | 'unknown';
  packageJson: 'dependencies' | 'devDependencies';
  /** why the latest version is unknown (only with `type: 'unknown'`) */
  reason?: string;
}

export function trackedPackages(packageJson: string): TrackedPackage[] {
  const pkg = JSON.parse(readFileSync(packageJson, 'utf8')) as Record<string, Record<string, string> | undefined>;
  const out: TrackedPackage[] = [];
  for (const section of ['dependencies', 'devDependencies'] as const) {
    for (const [name, range] of Object.entries(pkg[section] ?? {})) {
      if (/^(file:|link:|workspace:|git\+|git:|github:|https?:|portal:)/.test(range) || (range.includes('/') && !range.startsWith('npm:'))) continue;
      const alias = /^npm:((?:@[^/@]+\/)?[^@]+)(?:@(.*))?$/.exec(range);
      out.push({ name, registryName: alias ? alias[1] : name, section, range: alias ? (alias[2] ?? '') : range });
    }
  }
  return out;
}

/** A valid npm package name (legacy names with capitals, such as `uWebSockets.js`, included). */
export const isValidPackageName = (name: string) => name.length > 0 && name.length <= 214 && /^(?:@[a-z0-9~][a-z0-9-*._~]*\/)?[a-zA-Z0-9~][a-zA-Z0-9-._~]*$/.test(name);

function installedVersion(projectDir: string, p: TrackedPackage): string {
  try {
    const v = (JSON.parse(readFileSync(path.join(projectDir, 'node_modules', p.name, 'package.json'), 'utf8')) as { version?: string }).version;
    if (v) return v;
  } catch {
    /* not installed: fall back to the declared range */
  }
  return /\d+\.\d+\.\d+(?:-[\w.-]+)?/.exec(p.range)?.[0] ?? p.range;
}

type Semver = [number, number, number, string];
const parse = (v: string): Semver | undefined => {
  const m = /^(\d+)\.(\d+)\.(\d+)(?:-([\w.-]+))?/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3]), m[4] ?? ''] : undefined;
};

export function updateType(installed: string, latest: string): Exclude<PackageUpdate['type'], 'unknown'> {
  const a = parse(installed);
  const b = parse(latest);
  if (!a || !b || installed === latest) return 'latest';
  if (b[0] !== a[0]) return b[0] > a[0] ? 'major' : 'latest';
  if (b[1] !== a[1]) return b[1] > a[1] ? 'minor' : 'latest';
  if (b[2] !== a[2]) return b[2] > a[2] ? 'patch' : 'latest';
  // same x.y.z: a prerelease installed, the release is newer
  return a[3] !== '' && b[3] === '' ? 'patch' : 'latest';
}

/** Why a lookup failed, in words a person can act on (the transport's cause named, not the wrapper's). */
function lookupFailure(err: unknown, registry: string): string {
  const e = err as { name?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const cause = e?.cause;
  const detail = typeof cause?.message === 'string' && cause.message ? cause.message : typeof cause?.code === 'string' ? cause.code : typeof e?.message === 'string' ? e.message : String(err);
  return `cannot reach ${registry}: ${detail}`;
}

type Lookup = { latest: string } | { reason: string };

async function latestVersion(registry: string, name: string, signal: AbortSignal): Promise<Lookup> {
  let res: Response;
  try {
    res = await fetch(`${registry}-/package/${name}/dist-tags`, { signal, headers: { accept: 'application/json' } });
  } catch (err) {
    return { reason: lookupFailure(err, registry) };
  }
  if (res.status === 404) return { reason: `${registry} does not know ${name} (404)` };
  if (!res.ok) return { reason: `${registry} answered ${res.status}` };
  let tags: { latest?: unknown };
  try {
    tags = (await res.json()) as { latest?: unknown };
  } catch (err) {
    return { reason: signal.aborted ? lookupFailure(err, registry) : `${registry} answered something other than JSON` };
  }
  return typeof tags?.latest === 'string' ? { latest: tags.latest } : { reason: `${registry} names no latest version of ${name}` };
}

export interface UpdateReport {
  hasUpdates: boolean;
  updates: PackageUpdate[];
  /** outdated packages */
  count: number;
  message: string;
  /** the registry asked (for unscoped packages) */
  registry: string;
}

function reportMessage(updates: PackageUpdate[], count: number): string {
  const unknown = updates.filter((u) => u.type === 'unknown');
  const reasons = [...new Set(unknown.map((u) => u.reason))];
  const why = reasons.slice(0, 3).join('; ') + (reasons.length > 3 ? `; and ${reasons.length - 3} more` : '');
  if (unknown.length > 0 && unknown.length === updates.length) return `Could not check for updates: ${why}`;
  const base = count === 0 ? (unknown.length ? 'No outdated package found' : 'All packages are up to date') : `Found ${count} outdated package${count === 1 ? '' : 's'}`;
  return unknown.length ? `${base}; latest version unknown for ${unknown.length} package${unknown.length === 1 ? '' : 's'}: ${why}` : base;
}

/**
 * Checks every tracked package within `timeoutMs`; never waits longer, never fails for the registry's sake
 * (a package it did not answer for is `unknown` with a reason). Throws only when package.json cannot be read.
 */
export async function checkUpdates(opts: UpdatesOptions): Promise<UpdateReport> {
  const projectDir = path.dirname(opts.packageJson);
  const pkgs = trackedPackages(opts.packageJson);
  const registries = registriesOf(opts);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<Lookup>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve({ reason: '' });
    }, opts.timeoutMs);
  });
  let lookups: Lookup[];
  try {
    lookups = await Promise.all(
      pkgs.map(async (p) => {
        const registry = registryFor(registries, p.registryName);
        const r = await Promise.race([latestVersion(registry, p.registryName, controller.signal), deadline]);
        // the deadline won the race (or aborted the fetch): say so instead of the abort's own wording
        return 'reason' in r && controller.signal.aborted ? { reason: `no answer from ${registry} within ${opts.timeoutMs} ms` } : r;
      }),
    );
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  const updates = pkgs.map((p, i): PackageUpdate => {
    const installed = installedVersion(projectDir, p);
    const r = lookups[i];
    return 'latest' in r
      ? { name: p.name, installed, latest: r.latest, type: updateType(installed, r.latest), packageJson: p.section }
      : { name: p.name, installed, latest: null, type: 'unknown', packageJson: p.section, reason: r.reason };
  });
  const count = updates.filter((u) => u.type !== 'latest' && u.type !== 'unknown').length;
  return { hasUpdates: count > 0, updates, count, message: reportMessage(updates, count), registry: registries.registry };
}

/** `npm install` specs that move the given packages to their latest version (aliases kept). */
function installSpecs(pkgs: TrackedPackage[]): string[] {
  return pkgs.map((p) => (p.registryName !== p.name ? `${p.name}@npm:${p.registryName}@latest` : `${p.name}@latest`));
}

/** Runs `<npm> install <specs>` in the project directory; rejects on a non-zero exit or the time-out. */
function runInstall(opts: UpdatesOptions, specs: string[], devDependencies: boolean): Promise<void> {
  const args = ['install', ...(devDependencies ? ['--save-dev'] : []), ...specs];
  return new Promise((resolve, reject) => {
    const child = spawn(opts.npmCommand, args, { cwd: path.dirname(opts.packageJson), stdio: ['ignore', 'ignore', 'pipe'], shell: false });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 8192) stderr += d.toString('utf8');
    });
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`npm install timed out after ${opts.installTimeoutMs} ms`));
    }, opts.installTimeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`npm install exited with ${code}: ${stderr.trim().slice(0, 2000)}`));
    });
  });
}

/** Installs the latest version of `names` (each one tracked), dependencies and devDependencies separately. */
export async function installLatest(opts: UpdatesOptions, pkgs: TrackedPackage[]): Promise<void> {
  const deps = pkgs.filter((p) => p.section === 'dependencies');
  const dev = pkgs.filter((p) => p.section === 'devDependencies');
  if (deps.length) await runInstall(opts, installSpecs(deps), false);
  if (dev.length) await runInstall(opts, installSpecs(dev), true);
}
