/**
 * Update check and install of the server's own packages (GET/POST /updates, decisions.md §7): the registry
 * packages named in the project `package.json` (`dependencies`, `devDependencies`; npm aliases resolved, local
 * and git specs skipped) are compared with the registry's `latest` dist-tag over HTTP, all lookups together
 * bounded by one time-out (5 s default), so an offline host answers quickly instead of hanging. Installs run
 * `<npm> install <name>@latest …` in the project directory with a time-out; the command is injectable.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { findProjectPackageJson, PACKAGE_ROOT } from '../package-root.js';

export interface UpdatesOptions {
  /** the project package.json (default: the user's project when installed as a dependency, else eventloom's own) */
  packageJson: string;
  /** registry base URL (default: env `npm_config_registry`, else the public npm registry) */
  registryUrl: string;
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
    registryUrl: s.registryUrl ?? env.npm_config_registry ?? 'https://registry.npmjs.org/',
    timeoutMs: s.timeoutMs ?? 5000,
    npmCommand: s.npmCommand ?? 'npm',
    installTimeoutMs: s.installTimeoutMs ?? 5 * 60_000,
  };
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
  latest: string;
  type: 'major' | 'minor' | 'patch' | 'latest';
  packageJson: 'dependencies' | 'devDependencies';
}

export function trackedPackages(packageJson: string): TrackedPackage[] {
  const pkg = JSON.parse(readFileSync(packageJson, 'utf8')) as Record<string, Record<string, string> | undefined>;
  const out: TrackedPackage[] = [];
  for (const section of ['dependencies', 'devDependencies'] as const) {
    for (const [name, range] of Object.entries(pkg[section] ?? {})) {
      if (/^(file:|link:|workspace:|git\+|git:|github:|https?:|portal:)/.test(range) || range.includes('/') && !range.startsWith('npm:')) continue;
      const alias = /^npm:((?:@[^/@]+\/)?[^@]+)(?:@(.*))?$/.exec(range);
      out.push({ name, registryName: alias ? alias[1] : name, section, range: alias ? alias[2] ?? '' : range });
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

export function updateType(installed: string, latest: string): PackageUpdate['type'] {
  const a = parse(installed);
  const b = parse(latest);
  if (!a || !b || installed === latest) return 'latest';
  if (b[0] !== a[0]) return b[0] > a[0] ? 'major' : 'latest';
  if (b[1] !== a[1]) return b[1] > a[1] ? 'minor' : 'latest';
  if (b[2] !== a[2]) return b[2] > a[2] ? 'patch' : 'latest';
  // same x.y.z: a prerelease installed, the release is newer
  return a[3] !== '' && b[3] === '' ? 'patch' : 'latest';
}

async function latestVersion(registryUrl: string, name: string, signal: AbortSignal): Promise<string> {
  const base = registryUrl.endsWith('/') ? registryUrl : `${registryUrl}/`;
  const res = await fetch(`${base}-/package/${name}/dist-tags`, { signal, headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`registry answered ${res.status} for ${name}`);
  const tags = (await res.json()) as { latest?: unknown };
  if (typeof tags.latest !== 'string') throw new Error(`no latest version of ${name}`);
  return tags.latest;
}

export interface UpdateReport {
  hasUpdates: boolean;
  updates: PackageUpdate[];
  count: number;
  message: string;
}

/** Checks every tracked package; throws when the registry cannot be reached within the budget. */
export async function checkUpdates(opts: UpdatesOptions): Promise<UpdateReport> {
  const projectDir = path.dirname(opts.packageJson);
  const pkgs = trackedPackages(opts.packageJson);
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const updates = await Promise.all(
    pkgs.map(async (p): Promise<PackageUpdate> => {
      const latest = await latestVersion(opts.registryUrl, p.registryName, signal);
      const installed = installedVersion(projectDir, p);
      return { name: p.name, installed, latest, type: updateType(installed, latest), packageJson: p.section };
    }),
  );
  const count = updates.filter((u) => u.type !== 'latest').length;
  return {
    hasUpdates: count > 0,
    updates,
    count,
    message: count === 0 ? 'All packages are up to date' : `Found ${count} outdated package${count === 1 ? '' : 's'}`,
  };
}

/** `npm install` specs that move the given packages to their latest version (aliases kept). */
export function installSpecs(pkgs: TrackedPackage[]): string[] {
  return pkgs.map((p) => (p.registryName !== p.name ? `${p.name}@npm:${p.registryName}@latest` : `${p.name}@latest`));
}

/** Runs `<npm> install <specs>` in the project directory; rejects on a non-zero exit or the time-out. */
export function runInstall(opts: UpdatesOptions, specs: string[], devDependencies: boolean): Promise<void> {
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
