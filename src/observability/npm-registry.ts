/**
 * Which registry npm would ask for a package, read the way npm reads its configuration: the environment
 * (`npm_config_registry`, any case, `@scope:registry` too), then the project's `.npmrc`, the user's `.npmrc`
 * (`npm_config_userconfig`, else `~/.npmrc`) and the global `npmrc` (`npm_config_globalconfig`, else
 * `<node prefix>/etc/npmrc`), the first one naming a key winning. Scoped packages use `@scope:registry` when
 * one is set. The update check uses it so that a host behind a mirror asks the mirror, as `npm install` will.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const PUBLIC_REGISTRY = 'https://registry.npmjs.org/';

export interface NpmRegistries {
  /** the default registry, ending with `/` */
  registry: string;
  /** `@scope` → registry, each ending with `/` */
  scopes: Record<string, string>;
  /** where the default registry came from (`env`, a file path, or `default`) */
  source: string;
}

const withSlash = (url: string) => (url.endsWith('/') ? url : `${url}/`);

/** `${VAR}` and `${VAR?}` are replaced from the environment, as npm does in `.npmrc` values. */
function expand(value: string, env: NodeJS.ProcessEnv): string {
  return value.replace(/\$\{([^${}?]+)\??\}/g, (_m, name: string) => env[name] ?? '');
}

/** The `key = value` pairs of one ini file (comments, sections and quotes handled); an absent file is empty. */
function readNpmrc(file: string, env: NodeJS.ProcessEnv): Map<string, string> {
  const out = new Map<string, string>();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return out;
  }
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith(';') || line.startsWith('#') || line.startsWith('[')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq).trim();
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) value = value.slice(1, -1);
    out.set(key, expand(value, env));
  }
  return out;
}

/** The environment's npm settings: `npm_config_<key>` in any case, `_` standing for `-` as npm reads them. */
function envSettings(env: NodeJS.ProcessEnv): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(env)) {
    if (!v || !/^npm_config_/i.test(k)) continue;
    const key = k.slice('npm_config_'.length);
    out.set(key.startsWith('//') ? key : key.replace(/(?!^)_/g, '-').toLowerCase(), v);
  }
  return out;
}

/** The registries npm would use for a project in `projectDir`. */
export function npmRegistries(projectDir: string, env: NodeJS.ProcessEnv): NpmRegistries {
  const fromEnv = envSettings(env);
  const home = env.HOME ?? os.homedir();
  const userFile = fromEnv.get('userconfig') ?? path.join(home, '.npmrc');
  const globalFile = fromEnv.get('globalconfig') ?? path.join(fromEnv.get('prefix') ?? path.dirname(path.dirname(process.execPath)), 'etc', 'npmrc');
  const layers: Array<[string, Map<string, string>]> = [
    ['env', fromEnv],
    [path.join(projectDir, '.npmrc'), readNpmrc(path.join(projectDir, '.npmrc'), env)],
    [userFile, readNpmrc(userFile, env)],
    [globalFile, readNpmrc(globalFile, env)],
  ];
  let registry: string | undefined;
  let source = 'default';
  const scopes: Record<string, string> = {};
  for (const [where, settings] of layers) {
    const r = settings.get('registry');
    if (registry === undefined && r) {
      registry = withSlash(r);
      source = where;
    }
    for (const [k, v] of settings) {
      const m = /^(@[^:]+):registry$/.exec(k);
      if (m && v && !(m[1] in scopes)) scopes[m[1]] = withSlash(v);
    }
  }
  return { registry: registry ?? PUBLIC_REGISTRY, scopes, source };
}

/** The registry of one package name under `registries`. */
export function registryFor(registries: NpmRegistries, name: string): string {
  const scope = name.startsWith('@') ? name.slice(0, name.indexOf('/')) : undefined;
  return (scope && registries.scopes[scope]) || registries.registry;
}
