/**
 * Where the running copy of eventloom was installed from, so that `eventloom init <dir>` writes a
 * dependency `npm install` in `<dir>` resolves. eventloom is not on the npm registry yet: a user
 * gets it as a tarball (`npm pack` in a checkout) or as the path of a checkout, and a `^version`
 * range would make `npm install` fail with npm's 404. The evidence, in order:
 *
 * - eventloom's own directory is not inside a `node_modules`: it is a checkout, run from there or
 *   installed by its path (npm links a directory, and Node resolves the link to the checkout);
 * - else the installing project's lockfile (`package-lock.json`, `npm-shrinkwrap.json`, or the
 *   `node_modules/.package-lock.json` npm keeps beside every install, `npx`'s cache included)
 *   names what it `resolved` eventloom from: a `file:` tarball, a linked directory, a registry
 *   tarball (then `^version`) or another URL;
 * - else the project's package.json declaration, when it is a `file:` spec.
 *
 * A local source is written as a `file:` path relative to the new project (npm resolves it from
 * there, and the pair stays valid when moved together).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type InstallSource = { kind: 'tarball' | 'directory'; path: string } | { kind: 'registry' } | { kind: 'url'; url: string } | { kind: 'unknown' };

interface LockEntry {
  resolved?: unknown;
  link?: unknown;
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A `file:` spec or lockfile `resolved` value (relative to `base`, absolute, or a file URL) as an absolute path. */
function fileTarget(spec: string, base: string): string {
  const rest = spec.slice('file:'.length);
  return rest.startsWith('//') ? fileURLToPath(spec) : path.resolve(base, rest);
}

const localSource = (target: string): InstallSource => ({ kind: /\.(tgz|tar\.gz|tar)$/i.test(target) ? 'tarball' : 'directory', path: target });

/** What the copy of eventloom at `packageRoot` (its package.json's directory, links resolved) was installed from. */
export function installSource(packageRoot: string, name = 'eventloom', version = ''): InstallSource {
  const parts = packageRoot.split(path.sep);
  const nm = parts.indexOf('node_modules');
  if (nm < 0) return { kind: 'directory', path: packageRoot };
  // the outermost node_modules: its parent is the project whose lockfile lists this copy (nested ones included)
  const project = parts.slice(0, nm).join(path.sep) || path.sep;
  const key = path.relative(project, packageRoot).split(path.sep).join('/');
  for (const lockfile of ['package-lock.json', 'npm-shrinkwrap.json', path.join('node_modules', '.package-lock.json')]) {
    const packages = readJson(path.join(project, lockfile))?.packages as Record<string, LockEntry> | undefined;
    const entry = packages?.[key];
    if (typeof entry?.resolved !== 'string') continue;
    const resolved = entry.resolved;
    if (resolved.startsWith('file:')) return localSource(fileTarget(resolved, project));
    // a linked directory is recorded by its path relative to the project
    if (entry.link === true) return { kind: 'directory', path: path.resolve(project, resolved) };
    // a registry serves a package's tarballs at <registry>/<name>/-/<name>-<version>.tgz
    const bare = name.replace(/^@[^/]+\//, '');
    if (/^https?:\/\//.test(resolved) && resolved.endsWith(`/${name}/-/${bare}-${version}.tgz`)) return { kind: 'registry' };
    return { kind: 'url', url: resolved };
  }
  const pkg = readJson(path.join(project, 'package.json'));
  for (const section of ['dependencies', 'devDependencies', 'optionalDependencies']) {
    const declared = (pkg?.[section] as Record<string, unknown> | undefined)?.[name];
    if (typeof declared === 'string' && declared.startsWith('file:')) return localSource(fileTarget(declared, project));
  }
  return { kind: 'unknown' };
}

export interface DependencySpec {
  /** the value for `dependencies.eventloom` */
  spec: string;
  /** what `init` tells the user about it, when the spec is not a plain registry range */
  note?: string;
}

/** The dependency a project in `projectDir` declares to get the same eventloom as `source`. */
export function dependencySpec(source: InstallSource, projectDir: string, version: string): DependencySpec {
  switch (source.kind) {
    case 'registry':
      return { spec: `^${version}` };
    case 'url':
      return { spec: source.url, note: `eventloom: ${source.url} (where this eventloom was installed from)` };
    case 'tarball':
    case 'directory': {
      const rel = path.relative(projectDir, source.path).split(path.sep).join('/');
      const spec = `file:${rel === '' ? '.' : rel}`;
      const what = source.kind === 'tarball' ? 'the tarball' : 'the eventloom checkout';
      const gone = existsSync(source.path) ? '' : ` It is not at ${source.path} any more: point the dependency at a tarball or checkout that exists.`;
      return { spec, note: `eventloom is not on the npm registry yet: package.json depends on ${spec}, ${what} this eventloom was installed from.${gone}` };
    }
    case 'unknown':
      return {
        spec: `^${version}`,
        note:
          `eventloom is not on the npm registry yet, and where this copy was installed from could not be told: before \`npm install\`, ` +
          'set dependencies.eventloom in package.json to `file:<path>` of the tarball `npm pack` made in an eventloom checkout, or of the checkout itself.',
      };
  }
}
