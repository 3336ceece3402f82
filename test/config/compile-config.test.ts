/**
 * A TypeScript config compiled without a loader hook: the config and its local modules become one ES
 * module in the project's node_modules/.cache/eventloom/, packages stay imports (a self-reference becomes
 * the file it resolves to, never a bundled copy), `import.meta` and stack traces still name each source
 * file, and the compiled module is reused until one of its inputs changes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { compiledConfigUrl } from '../../src/config/compile-config.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

describe('compiledConfigUrl', () => {
  let project: string;
  beforeEach(() => {
    project = mkdtempSync(path.join(os.tmpdir(), 'eventloom-compile-config-'));
    write(path.join(project, 'package.json'), JSON.stringify({ name: 'my-app', type: 'module', exports: { '.': './shared/index.js' } }));
    // tsconfig `paths` maps the project's own name to its sources, as this repository does for eventloom
    write(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { paths: { 'my-app': ['./shared/index.ts'] } } }));
    write(path.join(project, 'shared', 'index.js'), 'export const shared = "the built copy";\n');
    write(path.join(project, 'shared', 'index.ts'), 'export const shared: string = "the source copy";\n');
    mkdirSync(path.join(project, 'node_modules'));
    symlinkSync(path.join(ROOT, 'node_modules', 'zod'), path.join(project, 'node_modules', 'zod'), 'dir');
    write(
      path.join(project, 'lib', 'helper.ts'),
      "import { z } from 'zod';\nexport const where: string = import.meta.url;\nexport const schema = z.object({ city: z.string() });\nexport const greeting = 'hello';\nexport function boom(): never {\n  throw new Error('boom');\n}\n",
    );
    write(
      path.join(project, 'eventloom.config.ts'),
      "import { shared } from 'my-app';\nimport { greeting, schema, where } from './lib/helper.js';\nexport { boom } from './lib/helper.js';\ntype Config = { greeting: string; where: string; shared: string; parsed: unknown };\nconst config: Config = { greeting, where, shared, parsed: schema.parse({ city: 'Paris' }) };\nexport default config;\n",
    );
  });
  afterEach(() => rmSync(project, { recursive: true, force: true }));

  it('bundles the config and its local modules into the project cache, keeping packages as imports', async () => {
    const url = await compiledConfigUrl(path.join(project, 'eventloom.config.ts'));
    expect(url).toBeDefined();
    const file = fileURLToPath(url!);
    expect(path.dirname(file)).toBe(path.join(project, 'node_modules', '.cache', 'eventloom'));
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('from "zod"');
    expect(text).toContain(`from "${pathToFileURL(path.join(project, 'shared', 'index.js')).href}"`);
    expect(text).not.toContain('the source copy');

    const config = (await import(url!)).default;
    expect(config).toEqual({ greeting: 'hello', where: pathToFileURL(path.join(project, 'lib', 'helper.ts')).href, shared: 'the built copy', parsed: { city: 'Paris' } });
  });

  it('maps stack traces of errors thrown in the config back to its TypeScript files', async () => {
    const url = await compiledConfigUrl(path.join(project, 'eventloom.config.ts'));
    const script = `process.setSourceMapsEnabled(true); const m = await import(${JSON.stringify(url)}); try { m.boom(); } catch (err) { console.log(err.stack); }`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project });
    expect(stdout).toContain(`${path.join(project, 'lib', 'helper.ts')}:6:`);
  });

  it('reuses the compiled module until an input changes, then compiles again', async () => {
    const config = path.join(project, 'eventloom.config.ts');
    const url = await compiledConfigUrl(config);
    const file = fileURLToPath(url!);
    const compiledAt = statSync(file).mtimeMs;

    expect(await compiledConfigUrl(config)).toBe(url);
    expect(statSync(file).mtimeMs).toBe(compiledAt);

    const helper = path.join(project, 'lib', 'helper.ts');
    writeFileSync(helper, readFileSync(helper, 'utf8').replace("'hello'", "'bonjour'"));
    const later = new Date(Date.now() + 5000);
    utimesSync(helper, later, later);
    expect(await compiledConfigUrl(config)).toBe(url);
    expect(readFileSync(file, 'utf8')).toContain('bonjour');
    expect((await import(`${url}?after-edit`)).default.greeting).toBe('bonjour');
  });

  it('leaves a .ts config of a CommonJS project to tsx, which names the rename to .mts', async () => {
    write(path.join(project, 'package.json'), JSON.stringify({ name: 'my-app' }));
    expect(await compiledConfigUrl(path.join(project, 'eventloom.config.ts'))).toBeUndefined();
    write(path.join(project, 'eventloom.config.mts'), 'export default { server: { port: 1 } };\n');
    expect(await compiledConfigUrl(path.join(project, 'eventloom.config.mts'))).toBeDefined();
  });

  it('reports a config that does not compile, naming the file and the problem', async () => {
    write(path.join(project, 'eventloom.config.ts'), "import { missing } from './nowhere.js';\nexport default { missing };\n");
    await expect(compiledConfigUrl(path.join(project, 'eventloom.config.ts'))).rejects.toThrow(/Could not resolve "\.\/nowhere\.js"/);
  });
});
