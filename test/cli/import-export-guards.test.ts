/**
 * What `eventloom import` and `eventloom export` refuse, on LevelDB data directories (the commands in this process,
 * one of each as the real CLI child process for the exit code and message): an import
 * whose stream names are not ones the server writes, or whose records contradict their stream (execution, workflow,
 * run, agent), and an import that conflicts with the target anywhere, all leave the target as it was (all or
 * nothing); `export --out` never writes inside a data directory.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/run-cli.js';
import { importCommand } from '../../src/cli/import.js';
import { exportCommand } from '../../src/cli/export.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'eventloom-guards-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let files = 0;

type Rec = { seq?: number; stream: string; streamSeq: number; type: string; data: Record<string, unknown>; at: number; kind?: string };

/** The records of a completed `echo` execution, as the server writes them. */
function execution(id: string, extra: Record<string, unknown> = {}, stream = `exec:${id}`): Rec[] {
  const step = { stepIndex: 0, stepId: 'echo', stepName: 'Echo', stepType: 'andThen', input: { text: 'x' }, attempt: 1 };
  return [
    {
      stream,
      streamSeq: 1,
      type: 'execution.started',
      data: { executionId: id, workflowId: 'echo', workflowName: 'Echo', stepIds: ['echo'], input: { text: 'x' }, context: {}, workflowState: {}, metadata: {}, createdAt: 1_000, ...extra },
      at: 1_000,
      kind: 'workflow-execution@1',
    },
    { stream, streamSeq: 2, type: 'step.started', data: step, at: 1_001 },
    { stream, streamSeq: 3, type: 'step.completed', data: { ...step, output: { text: 'x' } }, at: 1_002 },
    { stream, streamSeq: 4, type: 'execution.completed', data: { result: { text: 'x' }, workflowName: 'Echo' }, at: 1_003 },
  ];
}

/** The records of a finished agent run. */
function run(id: string, extra: Record<string, unknown> = {}, stream = `run:${id}`): Rec[] {
  const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
  return [
    { stream, streamSeq: 1, type: 'run.started', data: { runId: id, agentId: 'assistant', operationType: 'text', input: 'hi', options: {}, model: 'demo', ...extra }, at: 2_000, kind: 'agent-run@1' },
    { stream, streamSeq: 2, type: 'run.finished', data: { steps: [], text: 'hello', usage, finishReason: 'stop' }, at: 2_001 },
  ];
}

/** Writes a history file of `streams` (global seqs in order) and returns its path. */
function history(...streams: Rec[][]): string {
  const records = streams.flat().map((r, i) => ({ ...r, seq: i + 1 }));
  const file = path.join(tmp, `history-${++files}.jsonl`);
  const header = { format: 'eventloom-history', formatVersion: 1, eventloomVersion: '0.1.0', exportedAt: new Date(0).toISOString(), streams: streams.length };
  writeFileSync(file, [header, ...records].map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}

/** The streams of a data directory, read back through `eventloom export`. */
async function streamsOf(data: string): Promise<string[]> {
  const out = path.join(tmp, `read-${++files}.jsonl`);
  expect(await exportCommand(['--data', data, '--out', out])).toBe(0);
  return [
    ...new Set(
      readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => JSON.parse(l).stream as string),
    ),
  ].sort();
}

const imports = (file: string, target: string) => importCommand([file, '--data', target]);
const refusal = (exitCode: number, message: string) => ({ name: 'CliError', exitCode, message: expect.stringContaining(message) });

const dataDir = (name: string) => path.join(tmp, name);

describe('eventloom import', () => {
  it('refuses stream names the server never writes, and writes nothing', async () => {
    const cases: Array<[Rec[], string]> = [
      [execution('../../etc/passwd'), '"exec:../../etc/passwd" is not a well-formed stream name: ".." cannot be part of an id'],
      [execution('a/../b', { parentExecutionId: 'a', parentStepId: '..' }), '"exec:a/../b" is not a well-formed stream name: ".." cannot be part of an id'],
      [execution('tab\there'), '"exec:tab\\there" is not a well-formed stream name: "tab\\there" cannot be part of an id'],
      [execution('x'.repeat(129)), 'is not a well-formed stream name: the id is longer than 128 characters'],
      [execution('e1', {}, 'run:e1'), '"run:e1" is not a well-formed stream name: workflow-execution streams are named exec:<id>'],
      [run('r1', {}, 'exec:r1'), '"exec:r1" is not a well-formed stream name: agent-run streams are named run:<id>'],
      [run('r/1'), '"run:r/1" is not a well-formed stream name: a run id has no "/"'],
    ];
    for (const [records, message] of cases) {
      const target = dataDir(`names-${files}`);
      await expect(imports(history(execution('fine'), records), target)).rejects.toMatchObject(refusal(1, message));
      expect(existsSync(path.join(target, 'log', 'CURRENT'))).toBe(false);
    }
    // the real command: exit code 1 and the message
    const r = await runCli(['import', history(execution('fine'), execution('../../etc/passwd')), '--data', dataDir('names-cli')]);
    expect({ code: r.code, stderr: r.stderr.trim() }).toEqual({ code: 1, stderr: 'eventloom import: "exec:../../etc/passwd" is not a well-formed stream name: ".." cannot be part of an id' });
  });

  it('refuses records whose execution, workflow, run or agent contradicts their stream', async () => {
    const laterWorkflow = execution('w1');
    laterWorkflow[3].data.workflowName = 'Other';
    const laterRun = run('r2');
    laterRun[1].data.runId = 'someone-else';
    const cases: Array<[Rec[], string]> = [
      [execution('inside', {}, 'exec:outside'), 'exec:outside: record 1 \'execution.started\' names execution "inside", not "outside"'],
      [laterWorkflow, 'exec:w1: record 4 \'execution.completed\' names workflowName "Other", the stream\'s is "Echo"'],
      [execution('nowf', { workflowId: '' }), "exec:nowf: record 1 'execution.started' names no workflow (workflowId)"],
      [execution('p/s', {}), '"p/s" is a sub-workflow id but the record names no parentExecutionId'],
      [execution('p/s', { parentExecutionId: 'q', parentStepId: 's' }), '"p/s" is not a sub-workflow of step "s" of execution "q"'],
      [execution('top', { parentExecutionId: 'q', parentStepId: 's' }), 'names parent execution "q" but "top" is not a sub-workflow id'],
      [run('inside', {}, 'run:outside'), 'run:outside: record 1 \'run.started\' names run "inside", not "outside"'],
      [laterRun, 'run:r2: record 2 \'run.finished\' names runId "someone-else", the stream\'s is "r2"'],
      [run('noagent', { agentId: 7 }), "run:noagent: record 1 'run.started' names no agent (agentId)"],
    ];
    for (const [records, message] of cases) {
      const target = dataDir(`agree-${files}`);
      await expect(imports(history(execution('fine'), records), target)).rejects.toMatchObject(refusal(1, message));
      expect(existsSync(path.join(target, 'log', 'CURRENT'))).toBe(false);
    }
  });

  it('imports sub-workflow streams that agree with their parent, and runs', async () => {
    const target = dataDir('children');
    expect(
      await imports(
        history(execution('p'), execution('p/step', { parentExecutionId: 'p', parentStepId: 'step' }), execution('p/step/inner', { parentExecutionId: 'p', parentStepId: 'step' }), run('r3')),
        target,
      ),
    ).toBe(0);
    expect(await streamsOf(target)).toEqual(['exec:p', 'exec:p/step', 'exec:p/step/inner', 'run:r3']);
  });

  it('imports all or nothing: a stream that conflicts with the target leaves the streams before it out too', async () => {
    const target = dataDir('conflict');
    expect(await imports(history(execution('held')), target)).toBe(0);
    const other = execution('held');
    other[0].data.input = { text: 'changed' };
    // `new-one` comes first in the file (lower seq), so it used to be written before the conflict was found
    const r = await runCli(['import', history(execution('new-one'), run('r4'), other), '--data', target]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`exec:held already exists in ${target} with other records; nothing was imported`);
    expect(await streamsOf(target)).toEqual(['exec:held']);
  });
});

describe('eventloom export --out', () => {
  it('refuses a path inside the data directory it reads or inside any other data directory, and leaves them intact', async () => {
    const data = dataDir('export-source');
    const elsewhere = dataDir('export-other');
    for (const d of [data, elsewhere]) expect(await imports(history(execution('one')), d)).toBe(0);
    const current = readFileSync(path.join(data, 'log', 'CURRENT'), 'utf8');
    const link = path.join(tmp, 'link-to-data');
    symlinkSync(data, link);
    for (const [out, dir] of [
      [path.join(data, 'log', 'CURRENT'), data],
      [path.join(data, 'history.jsonl'), data],
      [path.join(data, 'new', 'sub', 'history.jsonl'), data],
      [data, data],
      [path.join(link, 'log', 'CURRENT'), data],
      [path.join(elsewhere, 'log', 'h.jsonl'), path.join(elsewhere, 'log')],
      [path.join(elsewhere, 'h.jsonl'), elsewhere],
    ]) {
      await expect(exportCommand(['--data', data, '--out', out])).rejects.toMatchObject({
        exitCode: 2,
        message: `--out ${out} is inside the data directory ${dir}: export never writes into a data directory (it could overwrite the event log); write the file elsewhere`,
      });
    }
    // the real command: exit code 2 and the message
    const cli = await runCli(['export', '--data', data, '--out', path.join(data, 'log', 'CURRENT')]);
    expect({ code: cli.code, stderr: cli.stderr.trim() }).toEqual({
      code: 2,
      stderr: `eventloom export: --out ${path.join(data, 'log', 'CURRENT')} is inside the data directory ${data}: export never writes into a data directory (it could overwrite the event log); write the file elsewhere`,
    });
    expect(readFileSync(path.join(data, 'log', 'CURRENT'), 'utf8')).toBe(current);
    expect(existsSync(path.join(data, 'history.jsonl'))).toBe(false);
    expect(await streamsOf(data)).toEqual(['exec:one']);
    expect(await streamsOf(elsewhere)).toEqual(['exec:one']);

    // beside the data directory is fine
    const ok = path.join(tmp, 'exports', 'one.jsonl');
    mkdirSync(path.dirname(ok));
    expect(await exportCommand(['--data', data, '--out', ok])).toBe(0);
    expect(readFileSync(ok, 'utf8')).toContain('"stream":"exec:one"');
  });
});
