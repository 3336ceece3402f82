/**
 * Mistakes a newcomer makes in a config, met by the real CLI at start-up rather than by a request
 * later: a misspelt agent id in an `andAgent` step (exit 1, "did you mean"), a misspelt MCP server
 * id, and a config whose code throws while it is imported (the file, line and stack are printed).
 * A misspelt step id in `getStepResult` fails the step with the ids that exist.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCommands, execute } from '../../src/testing/index.js';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';
import { createAgent } from '../../src/agents/define-agent.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestServer } from '../helpers/server.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures');
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'eventloom-mistakes-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
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
