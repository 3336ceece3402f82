/**
 * `eventloom init [dir]`: scaffolds a project that runs with `npm start` — eventloom.config.ts (one
 * agent with one tool, one workflow that suspends for a person's approval), a property test of that
 * workflow (eventloom/testing, run by `npm test`), tsconfig.json, a package.json with `start`,
 * `typecheck` and `test` scripts, and a .gitignore. An existing file is never
 * overwritten: an existing package.json only gains the scripts, dependencies and `"type": "module"`
 * it lacks (values already there are kept, except npm's placeholder test script, which only fails;
 * a project that declares CommonJS keeps it and gets eventloom.config.mts), and every other existing
 * file is left as it is. The eventloom dependency names what this copy was installed from
 * (init-source.ts): eventloom is not on the npm registry yet.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../package-root.js';
import { dependencySpec, installSource, type InstallSource } from './init-source.js';

export const CONFIG_TEMPLATE = `/**
 * eventloom config: the agents, tools and workflows this server hosts.
 * Run \`npm start\`, then open http://127.0.0.1:3141/ui to try them.
 */
import { z } from 'zod';
import { andThen, createAgent, createTool, createWorkflow, defineConfig } from 'eventloom';

const Currency = z.enum(['EUR', 'USD', 'GBP', 'JPY']);
type Currency = z.infer<typeof Currency>;

/** Offline exchange rates (per 1 EUR): swap in a real rates API when you have one. */
const RATES: Record<Currency, number> = { EUR: 1, USD: 1.073, GBP: 0.86, JPY: 162.4 };

function convert(amount: number, from: Currency, to: Currency): number {
  return Math.round((amount / RATES[from]) * RATES[to] * 100) / 100;
}

export const convertCurrency = createTool({
  name: 'convertCurrency',
  description: 'Convert an amount of money from one currency to another',
  parameters: z.object({
    amount: z.number().describe('The amount to convert'),
    from: Currency.describe('Currency to convert from'),
    to: Currency.describe('Currency to convert to'),
  }),
  execute: ({ amount, from, to }) => ({ amount: convert(amount, from, to), currency: to }),
});

export const assistant = createAgent({
  id: 'assistant',
  name: 'Assistant',
  instructions: 'You are a helpful assistant. Use convertCurrency to convert money between currencies.',
  // unset: EVENTLOOM_MODEL (e.g. openai/gpt-4o-mini with OPENAI_API_KEY), else the offline demo model
  tools: [convertCurrency],
});

const Expense = z.object({ description: z.string(), amount: z.number().positive(), currency: Currency });

export const expenseApproval = createWorkflow(
  {
    id: 'expense-approval',
    name: 'Expense approval',
    purpose: 'Convert an expense to EUR and wait for a manager to approve it',
    input: Expense,
    result: z.object({ status: z.enum(['approved', 'rejected']), amountEur: z.number() }),
    suspendSchema: z.object({ amountEur: z.number() }),
    resumeSchema: z.object({ approved: z.boolean() }),
  },
  andThen({
    id: 'convert',
    name: 'Convert to EUR',
    execute: ({ data }: { data: z.infer<typeof Expense> }) => ({ amountEur: convert(data.amount, data.currency, 'EUR') }),
  }),
  andThen({
    id: 'manager-approval',
    name: 'Manager approval',
    suspendSchema: z.object({ amountEur: z.number() }),
    resumeSchema: z.object({ approved: z.boolean() }),
    // the execution suspends here until POST /workflows/expense-approval/executions/:id/resume {"resumeData": {"approved": true}}
    execute: ({ data, resumeData, suspend }) => {
      const { amountEur } = data as { amountEur: number };
      if (resumeData === undefined) suspend('waiting for a manager', { amountEur });
      return { status: (resumeData as { approved: boolean }).approved ? 'approved' : 'rejected', amountEur };
    },
  }),
);

export default defineConfig({
  agents: [assistant],
  workflows: [expenseApproval],
  server: { port: 3141, host: '127.0.0.1', dataDir: '.eventloom' },
});
`;

export const TSCONFIG_TEMPLATE = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2023'],
      types: ['node'],
      strict: true,
      skipLibCheck: true,
      esModuleInterop: true,
      noEmit: true,
    },
    include: ['eventloom.config.ts', '*.test.ts', '*.test.mts', 'src'],
  },
  null,
  2,
)}\n`;

const GITIGNORE_TEMPLATE = 'node_modules/\n.eventloom/\n';

/** A property test of the scaffolded workflow (eventloom/testing + fast-check, run by vitest). */
export const PROPERTY_TEST_TEMPLATE = (configModule: string) => `/**
 * expense-approval under random inputs and random command sequences (suspend, resume, cancel,
 * crash and restart, replay from a step) on the real engine over an in-memory log: the built-in
 * invariants (no event after a terminal state, legal transitions, nothing acknowledged lost in a
 * crash, a recovered run ends like an uninterrupted one, replay equals its source) and one of ours.
 */
import { it } from 'vitest';
import { testWorkflow } from 'eventloom/testing';
import { expenseApproval } from '${configModule}';

it('expense-approval keeps its invariants under random commands', async () => {
  await testWorkflow(expenseApproval, {
    numRuns: 50,
    invariants: {
      'an approved or rejected expense reports its amount in EUR': ({ executions }) =>
        executions.every((e) => e.status !== 'completed' || typeof (e.result as { amountEur?: unknown }).amountEur === 'number'),
    },
  });
}, 60_000);
`;

interface OwnPackage {
  name: string;
  version: string;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const TEST_SCRIPT = 'vitest run';

/** The test script `npm init` writes: it only fails, so init replaces it (any other test script is the user's own). */
export const NPM_PLACEHOLDER_TEST = 'echo "Error: no test specified" && exit 1';

/** What a scaffolded package.json needs: scripts, eventloom and its peer zod, and what `typecheck` runs. */
function wanted(own: OwnPackage, eventloomSpec: string): { scripts: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string> } {
  return {
    scripts: { start: 'eventloom start', typecheck: 'tsc --noEmit', test: TEST_SCRIPT },
    dependencies: { eventloom: eventloomSpec, zod: own.peerDependencies?.zod ?? '^4.1.0' },
    devDependencies: {
      typescript: own.devDependencies?.typescript ?? '^5.9.0',
      '@types/node': own.devDependencies?.['@types/node'] ?? '^20.19.0',
      vitest: own.devDependencies?.vitest ?? '^4.1.0',
      'fast-check': own.devDependencies?.['fast-check'] ?? '^4.0.0',
    },
  };
}

function readPackageJson(file: string): Record<string, unknown> {
  try {
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (pkg === null || typeof pkg !== 'object' || Array.isArray(pkg)) throw new Error('not an object');
    return pkg as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${file} is not valid JSON (${(err as Error).message}); fix it and run init again`);
  }
}

const packageName = (dir: string) =>
  path
    .basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '') || 'eventloom-app';

export interface InitResult {
  dir: string;
  written: string[];
  skipped: string[];
  /** keys added to an existing package.json */
  added: string[];
  /** keys of an existing package.json whose value was replaced (npm's placeholder test script) */
  replaced: string[];
  next: string[];
  /** how to run the scaffold's property test */
  testHint?: string;
  /** what the user should know about the package.json written (where the eventloom dependency points) */
  notes: string[];
}

export interface ScaffoldOptions {
  /** eventloom's own package directory (default: this copy's), whose install source the dependency names */
  packageRoot?: string;
  /** the install source, when already known (tests) */
  source?: InstallSource;
}

/** Writes the scaffold into `dir` (relative to `cwd`); returns what it did, for the caller to print. */
export function scaffold(dirArg: string, cwd: string, opts: ScaffoldOptions = {}): InitResult {
  const dir = path.resolve(cwd, dirArg);
  mkdirSync(dir, { recursive: true });
  const result: InitResult = { dir, written: [], skipped: [], added: [], replaced: [], next: [], notes: [] };
  const writeNew = (name: string, content: string) => {
    const file = path.join(dir, name);
    if (existsSync(file)) result.skipped.push(name);
    else {
      // 'wx': fails rather than overwrite a file created since the check
      writeFileSync(file, content, { flag: 'wx' });
      result.written.push(name);
    }
  };
  const packageRoot = opts.packageRoot ?? PACKAGE_ROOT;
  const own = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as OwnPackage;
  const eventloom = dependencySpec(opts.source ?? installSource(packageRoot, own.name, own.version), dir, own.version);
  const want = wanted(own, eventloom.spec);
  const pkgFile = path.join(dir, 'package.json');
  const existing = existsSync(pkgFile) ? readPackageJson(pkgFile) : undefined;
  // a project that declares CommonJS keeps it; its config is then an .mts file (an ES module by name)
  const configName = existing !== undefined && existing.type !== undefined && existing.type !== 'module' ? 'eventloom.config.mts' : 'eventloom.config.ts';
  writeNew(configName, CONFIG_TEMPLATE);
  writeNew('tsconfig.json', configName === 'eventloom.config.ts' ? TSCONFIG_TEMPLATE : TSCONFIG_TEMPLATE.replace('"eventloom.config.ts"', '"eventloom.config.mts"'));
  writeNew('.gitignore', GITIGNORE_TEMPLATE);
  // in a CommonJS project the test is an ES module too (.mts), like its config
  const testFile = configName === 'eventloom.config.ts' ? 'expense-approval.prop.test.ts' : 'expense-approval.prop.test.mts';
  writeNew(testFile, PROPERTY_TEST_TEMPLATE(configName === 'eventloom.config.ts' ? './eventloom.config.js' : './eventloom.config.mjs'));

  if (existing === undefined) {
    const pkg = { name: packageName(dir), version: '0.1.0', private: true, type: 'module', ...want };
    writeFileSync(pkgFile, `${JSON.stringify(pkg, null, 2)}\n`, { flag: 'wx' });
    result.written.push('package.json');
  } else {
    const pkg = existing;
    // the config is an ES module importing eventloom (ESM only): a project without a "type" gets "module"
    if (pkg.type === undefined) {
      pkg.type = 'module';
      result.added.push('type');
    }
    const scripts = pkg.scripts as Record<string, unknown> | undefined;
    if (typeof scripts?.test === 'string' && scripts.test.trim() === NPM_PLACEHOLDER_TEST) {
      scripts.test = TEST_SCRIPT;
      result.replaced.push('scripts.test');
    }
    for (const section of ['scripts', 'dependencies', 'devDependencies'] as const) {
      const have = (pkg[section] ?? {}) as Record<string, string>;
      const declaredAnywhere = (name: string) => [pkg.dependencies, pkg.devDependencies, pkg.peerDependencies].some((s) => s && typeof s === 'object' && name in s);
      for (const [k, v] of Object.entries(want[section])) {
        if (k in have || (section !== 'scripts' && declaredAnywhere(k))) continue;
        have[k] = v;
        result.added.push(`${section}.${k}`);
      }
      if (Object.keys(have).length > 0) pkg[section] = have;
    }
    if (result.added.length > 0 || result.replaced.length > 0) writeFileSync(pkgFile, `${JSON.stringify(pkg, null, 2)}\n`);
    else result.skipped.push('package.json');
  }
  // the eventloom dependency written is this copy's source: say where it points
  if (eventloom.note !== undefined && (existing === undefined || result.added.includes('dependencies.eventloom'))) result.notes.push(eventloom.note);

  const cd = path.relative(cwd, dir);
  const prefix = cd === '' ? '' : `cd ${/\s/.test(cd) ? JSON.stringify(cd) : cd} && `;
  const installed = existsSync(path.join(dir, 'node_modules', 'eventloom')) && !result.added.some((a) => a.startsWith('dependencies') || a.startsWith('devDependencies'));
  result.next = installed ? [`${prefix}npm run typecheck`, 'npm start'] : [`${prefix}npm install`, 'npm start'];
  if (existsSync(path.join(dir, testFile))) {
    const finalPkg = readPackageJson(pkgFile);
    const test = (finalPkg.scripts as Record<string, unknown> | undefined)?.test;
    result.testHint =
      test === TEST_SCRIPT
        ? `npm test runs the property test of expense-approval (${testFile})`
        : `npx vitest run ${testFile} runs the property test of expense-approval (your own test script is kept)`;
  }
  return result;
}

export function runInit(dirArg: string, cwd: string): Promise<void> {
  const r = scaffold(dirArg, cwd);
  const lines = [`eventloom init: ${r.dir}`];
  for (const f of r.written) lines.push(`  created  ${f}`);
  const changes = [...(r.added.length > 0 ? [`added ${r.added.join(', ')}`] : []), ...(r.replaced.includes('scripts.test') ? [`replaced npm's placeholder test script with "${TEST_SCRIPT}"`] : [])];
  if (changes.length > 0) lines.push(`  updated  package.json (${changes.join('; ')})`);
  for (const f of r.skipped) lines.push(`  kept     ${f} (already there, not overwritten)`);
  for (const note of r.notes) lines.push('', note);
  lines.push('', 'Next:', ...r.next.map((c) => `  ${c}`), '');
  if (r.testHint !== undefined) lines.push(`Then ${r.testHint}.`, '');
  console.log(lines.join('\n'));
  return Promise.resolve();
}
