/**
 * Mistakes a newcomer makes in a config, met by the real CLI at start-up rather than by a request
 * later: a misspelt agent id in an `andAgent` step (exit 1, "did you mean"), a misspelt MCP server
 * id, and a config whose code throws while it is imported (the file, line and stack are printed).
 * A misspelt step id in `getStepResult` fails the step with the ids that exist. A project without a
 * config, and a data directory holding executions of workflows the config does not define, are
 * warned about at start-up.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCommands, execute } from '../../src/testing/index.js';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';
import { createAgent } from '../../src/agents/define-agent.js';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { runCli } from '../helpers/run-cli.js';
import { api, startTestServer } from '../helpers/server.js';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures');
// the TypeScript loader by path, so the CLI can run from a project directory without node_modules
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const spawned: SpawnedServer[] = [];
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'eventloom-mistakes-'));
  dirs.push(d);
  return d;
};
afterEach(async () => {
  for (const s of spawned.splice(0)) await killSpawned(s);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('cross-references checked at start-up', () => {
  it('exits 1 when an andAgent step of a sub-workflow names an agent that is not configured, suggesting the close one', async () => {
    const run = await runCli(['start', '--port', '0', '--data', tmp(), '--config', path.join(FIXTURES, 'misspelt-agent.config.ts')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "eventloom: Workflow 'drafting' step 'draft-reply' (in 'maybe-draft') (the sub-workflow of 'orders' step 'reply'): agent 'asistant' is not configured; did you mean 'assistant'? (agents: 'assistant')",
    );
    expect(run.output).not.toContain('eventloom listening');
  });

  it("refuses an agent's MCP server id that is not configured, suggesting the close one", async () => {
    const agent = createAgent({ id: 'a', name: 'A', instructions: 'x', mcpServers: ['filesytem'] });
    await expect(startTestServer({ agents: [agent], mcpServers: { filesystem: { url: 'http://127.0.0.1:1/mcp' } } })).rejects.toThrow(
      "Agent a: MCP server 'filesytem' is not configured in mcpServers; did you mean 'filesystem'? (MCP servers: 'filesystem')",
    );
  });

  it('fails the step that asks getStepResult for an unknown step id, naming the ids that exist', async () => {
    const wf = createWorkflow(
      { id: 'lookup' },
      andThen({ id: 'lookup-order', execute: () => ({ total: 5 }) }),
      andThen({ id: 'use-it', execute: ({ getStepResult }) => getStepResult('lookup-ordr') }),
    );
    const history = await runCommands(wf, [execute({})]);
    const [run] = history.executions;
    expect(run.status).toBe('error');
    const failed = run.records.find((r) => r.type === 'execution.failed')!.data as { error: { message: string; stepId: string } };
    expect(failed.error.stepId).toBe('use-it');
    expect(failed.error.message).toBe(
      "getStepResult('lookup-ordr'): workflow 'lookup' has no top-level step 'lookup-ordr'; did you mean 'lookup-order'? (its top-level steps: 'lookup-order', 'use-it')",
    );
  });

  it('gives getStepResult of a known step that has not run yet as undefined', async () => {
    const wf = createWorkflow(
      { id: 'later' },
      andThen({ id: 'first', execute: ({ getStepResult }) => ({ seen: getStepResult('second') ?? 'nothing yet' }) }),
      andThen({ id: 'second', execute: ({ data }) => data }),
    );
    const [run] = (await runCommands(wf, [execute({})])).executions;
    expect(run).toMatchObject({ status: 'completed', result: { seen: 'nothing yet' } });
  });
});

describe('a config that throws while it is imported', () => {
  it('prints the message, the file and line that threw, and the stack through the config', async () => {
    const dir = tmp();
    mkdirSync(path.join(dir, 'lib'));
    writeFileSync(path.join(dir, 'lib', 'helper.ts'), 'export function helper() {\n  // a typo\n  return zz;\n}\n');
    writeFileSync(path.join(dir, 'eventloom.config.ts'), "import { helper } from './lib/helper';\n\nexport default { workflows: helper() };\n");
    const run = await runCli(['start', '--port', '0', '--data', path.join(dir, 'data'), '--config', path.join(dir, 'eventloom.config.ts')]);
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines[0]).toBe('eventloom: zz is not defined');
    expect(lines[1]).toBe(`  (ReferenceError thrown at ${path.join(dir, 'lib', 'helper.ts')}:3:3 while importing the config ${path.join(dir, 'eventloom.config.ts')})`);
    expect(lines[2]).toMatch(new RegExp(`^    at helper \\(${path.join(dir, 'lib', 'helper.ts').replace(/[.]/g, '\\.')}:3:3\\)$`));
    expect(lines.slice(3).join('\n')).toContain(`${path.join(dir, 'eventloom.config.ts')}:3:`);
    // eventloom's own loader frames say nothing about the mistake
    expect(run.stderr).not.toMatch(/importConfig|loadConfig|node:internal/);
  });
});

describe('a start that serves something else than the person meant', () => {
  it('warns when a project without a config is served the bundled example', async () => {
    const project = tmp();
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'my-app', type: 'module' }));
    const s = await spawnServer(['--port', '0', '--data', path.join(project, '.eventloom'), '--log-format', 'json'], {}, 30_000, ['--import', TSX], {
      entry: path.join(ROOT, 'src', 'cli', 'index.ts'),
      cwd: project,
    });
    spawned.push(s);
    const warning = s
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((l) => l.level === 40);
    expect(warning?.msg).toBe(`no eventloom.config.ts (or .mts) in ${project}: serving the bundled example config; write one with \`eventloom init\` or name it with --config`);
    expect(warning?.config).toBe(`${path.join(ROOT, 'examples', 'eventloom.config.ts')} (bundled example)`);
  });

  it('names the workflows whose executions are in the log but not in the config, with their counts', async () => {
    const old = createWorkflow({ id: 'old-flow' }, andThen({ id: 'only', execute: () => 1 }));
    const kept = createWorkflow({ id: 'kept' }, andThen({ id: 'only', execute: () => 2 }));
    const dataDir = tmp();
    const first = await startTestServer({ workflows: [old, kept] }, { dataDir });
    for (const id of ['old-flow', 'old-flow', 'kept']) expect((await api(`${first.url}/workflows/${id}/execute`, { method: 'POST', json: { input: {} } })).status).toBe(200);
    await first.close();
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const second = await startTestServer({ workflows: [kept] }, { dataDir, logger });
    try {
      const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 40);
      expect(warnings).toEqual([
        expect.objectContaining({
          component: 'workflows',
          workflows: { 'old-flow': 2 },
          msg: `the log in ${dataDir} holds executions of workflows that are not configured: 'old-flow' (2 executions); they are listed but cannot be resumed or replayed (another project's data directory, or a workflow removed from the config?)`,
        }),
      ]);
    } finally {
      await second.close();
    }
  });
});
