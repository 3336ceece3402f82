/**
 * A TypeScript config without a module loader hook: esbuild bundles the config file and the local
 * modules it imports into one ES module, and the server imports that. Packages stay `import`s, so the
 * config shares eventloom, zod and every other dependency with the server, as under tsx. The module is
 * kept in `node_modules/.cache/eventloom/` of the config's project (bare imports resolve from there as
 * from the project) with the modification times of its inputs, and reused while none changed: a start
 * with an unchanged config runs no compiler at all. The module carries a source map: in a process with
 * source maps on (`eventloom dev`, or NODE_OPTIONS=--enable-source-maps), stack traces name the
 * config's own files and lines.
 *
 * tsx (a loader hook on its own thread, which every later import goes through) costs a start about
 * 200 ms of CPU and 20 MiB; it remains the fallback where this path does not apply (see `compiledConfigUrl`).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { VERSION } from '../version.js';

/** Bumped when the compiled form changes, so caches written by another version are not reused. */
const FORMAT = 2;

interface Manifest {
  format: number;
  /** the eventloom that compiled it (a self-reference is compiled to the file it resolved to) */
  version: string;
  /** absolute path → modification time of every file the bundle was made from */
  inputs: Array<[string, number]>;
}

/** The nearest `name` (file or directory) at or above `dir`. */
function fileAbove(dir: string, name: string): string | undefined {
  for (let d = dir; ; d = path.dirname(d)) {
    if (existsSync(path.join(d, name))) return path.join(d, name);
    if (path.dirname(d) === d) return undefined;
  }
}

/** Whether Node treats `file` as an ES module: `.mts`, or `.ts` under a package.json with "type": "module". */
function isEsModule(file: string): boolean {
  if (/\.mtsx?$/.test(file)) return true;
  const pkg = fileAbove(path.dirname(file), 'package.json');
  try {
    return pkg !== undefined && (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: unknown }).type === 'module';
  } catch {
    return false;
  }
}

function isCurrent(manifestFile: string, moduleFile: string): boolean {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
  } catch {
    return false;
  }
  if (manifest.format !== FORMAT || manifest.version !== VERSION || !existsSync(moduleFile)) return false;
  return manifest.inputs.every(([file, mtimeMs]) => statSync(file, { throwIfNoEntry: false })?.mtimeMs === mtimeMs);
}

/** `import.meta.url`, `.dirname` and `.filename` of each bundled file keep naming that file, not the bundle. */
function importMetaOfSource(source: string, file: string): string {
  return source
    .replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(file).href))
    .replace(/\bimport\.meta\.dirname\b/g, JSON.stringify(path.dirname(file)))
    .replace(/\bimport\.meta\.filename\b/g, JSON.stringify(file));
}

/** The package a bare specifier names (`zod`, `@ai-sdk/openai` from `@ai-sdk/openai/internal`), or undefined for a path. */
function packageName(specifier: string): string | undefined {
  if (/^(?:[./]|[a-z]+:)/i.test(specifier) || path.isAbsolute(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * How an import of package `name` from `dir` stays an import, even where tsconfig `paths` maps the name
 * to sources (as this repository does for `eventloom`), so the config shares the server's copy: a
 * package installed in a node_modules above stays a bare import; the project's own name (a
 * self-reference, which Node resolves only from inside the project, not from the cache) becomes the
 * file it resolves to. Undefined for anything else (a `paths` alias of local code is bundled).
 */
function externalImport(specifier: string, name: string, dir: string): string | undefined {
  for (let d = dir; ; d = path.dirname(d)) {
    if (existsSync(path.join(d, 'node_modules', name))) return specifier;
    const pkg = path.join(d, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name === name) return pathToFileURL(createRequire(pkg).resolve(specifier)).href;
      } catch {
        /* unreadable, or not resolvable as the package: keep walking up */
      }
    }
    if (path.dirname(d) === d) return undefined;
  }
}

const LOADERS: Record<string, 'ts' | 'tsx' | 'js' | 'jsx'> = { '.ts': 'ts', '.mts': 'ts', '.cts': 'ts', '.tsx': 'tsx', '.js': 'js', '.mjs': 'js', '.jsx': 'jsx' };

/** The config bundled into one ES module (the text) and the files it was made from, with their modification times. */
async function bundle(file: string, moduleFile: string): Promise<{ text: string; inputs: Array<[string, number]> }> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [file],
    absWorkingDir: path.dirname(file),
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    write: false,
    // names the bundle's place, so the source map's paths lead from it back to the sources
    outfile: moduleFile,
    // stack traces of errors thrown in the config's code name the TypeScript files, as under tsx
    sourcemap: 'inline',
    sourcesContent: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [
      {
        name: 'packages-external-and-import-meta-of-source',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => {
            const name = packageName(args.path);
            const external = name === undefined ? undefined : externalImport(args.path, name, args.resolveDir);
            return external === undefined ? undefined : { path: external, external: true };
          });
          b.onLoad({ filter: /\.(?:[cm]?[jt]s|[jt]sx)$/ }, (args) => {
            const loader = LOADERS[path.extname(args.path)];
            if (loader === undefined) return undefined;
            return { contents: importMetaOfSource(readFileSync(args.path, 'utf8'), args.path), loader };
          });
        },
      },
    ],
  });
  // the files bundled, and the tsconfig.json that steered the compiler (its `paths`, its JSX settings)
  const tsconfig = fileAbove(path.dirname(file), 'tsconfig.json');
  const inputs = [...Object.keys(result.metafile.inputs).map((rel) => path.resolve(path.dirname(file), rel)), ...(tsconfig ? [tsconfig] : [])].map((abs): [string, number] => [
    abs,
    statSync(abs).mtimeMs,
  ]);
  return { text: result.outputFiles[0].text, inputs };
}

/**
 * The files a config is made of: the config, the local modules it imports (packages excluded, as
 * when it is compiled) and the tsconfig.json that steers the compiler. What `eventloom dev` watches.
 */
export async function configInputFiles(file: string): Promise<string[]> {
  const abs = path.resolve(file);
  const { inputs } = await bundle(abs, path.join(path.dirname(abs), '.eventloom-config.mjs'));
  return inputs.map(([f]) => f);
}

async function compile(file: string, moduleFile: string, manifestFile: string): Promise<void> {
  const { text, inputs } = await bundle(file, moduleFile);
  // written aside and renamed: another server starting from the same project never reads half a file
  const tmp = `${moduleFile}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, moduleFile);
  writeFileSync(`${manifestFile}.${process.pid}.tmp`, JSON.stringify({ format: FORMAT, version: VERSION, inputs } satisfies Manifest));
  renameSync(`${manifestFile}.${process.pid}.tmp`, manifestFile);
}

/**
 * The URL of the compiled form of a TypeScript config, compiled now if its inputs changed; undefined
 * where tsx keeps loading it: a config Node would treat as CommonJS (tsx then explains the rename to
 * `.mts`), a config outside any project with a node_modules, or a cache directory that cannot be written.
 */
export async function compiledConfigUrl(file: string): Promise<string | undefined> {
  if (!isEsModule(file)) return undefined;
  const nodeModules = fileAbove(path.dirname(file), 'node_modules');
  if (nodeModules === undefined) return undefined;
  const dir = path.join(nodeModules, '.cache', 'eventloom');
  const key = createHash('sha256').update(file).digest('hex').slice(0, 16);
  const moduleFile = path.join(dir, `config-${key}.mjs`);
  const manifestFile = path.join(dir, `config-${key}.json`);
  if (!isCurrent(manifestFile, moduleFile)) {
    try {
      mkdirSync(dir, { recursive: true });
      await compile(file, moduleFile, manifestFile);
    } catch (err) {
      // a read-only project: tsx compiles in memory instead; a config that does not compile is reported
      if (['EACCES', 'EPERM', 'EROFS'].includes((err as { code?: string }).code ?? '')) return undefined;
      throw err;
    }
  }
  // Source maps are not switched on here: Node would then parse the map of every package loaded
  // after it (the ai SDK's alone are megabytes) and map every stack trace a request's error formats,
  // for the life of a server. `eventloom dev` starts its server with them on; `start` does under
  // NODE_OPTIONS=--enable-source-maps.
  return pathToFileURL(moduleFile).href;
}
