/**
 * `eventloom replay`: re-runs recorded executions (from a data directory or history files) against
 * the workflows of the current config, writing to no log, and reports per execution whether the
 * current code records the same history or where it first departs (history-replay.ts). Exit code 1
 * when any execution diverges, so it can gate a deploy in CI.
 */
import { parseArgs } from 'node:util';
import type { LogRecord } from '../log/types.js';
import { loadConfig } from '../config/define-config.js';
import { configuredWorkflows } from '../workflows/module.js';
import { EXECUTION_STREAM_PREFIX, executionStream } from '../workflows/events.js';
import { collectDefinitions, replayExecutionHistory, type ExecutionReplayReport } from '../workflows/history-replay.js';
import { openHistorySource } from './history-source.js';
import { readHistoryFile } from './history-file.js';
import { CliError } from './cli-error.js';
import type { ToolEnv } from './tool-env.js';

export const REPLAY_USAGE = `usage: eventloom replay (--data <dir> | --database-url <url> | <file.jsonl>...) [--config <file>]
         [--execution <id>] [--workflow <id>] [--live] [--step-timeout <ms>] [--json]
  Replays recorded executions against the current config's workflows without writing anything.
  Default: every step is fed its recorded outcome (andWhen conditions are evaluated); --live runs
  the step functions again and compares their outcomes. Prints one line per execution (--json: one
  JSON report per line). Exit code 1 when any execution diverges.`;

const short = (id: string) => (id.length > 13 ? `${id.slice(0, 8)}…` : id);

/** Human-readable lines of one report. */
function formatReport(r: ExecutionReplayReport): string {
  const head = `${r.workflowId} ${r.executionId} (${r.recordedStatus})`;
  if (r.result === 'identical') return `identical  ${head}: ${r.steps} step outcome(s) match${r.fed.length ? `; fed: ${r.fed.join(', ')}` : ''}`;
  const lines: string[] = [];
  const all = r.valueDifferences?.length ? r.valueDifferences : [r.divergence!];
  for (const d of all) {
    const where = d.stepId !== undefined ? ` at step '${d.stepId}'${d.stepIndex !== undefined ? ` (index ${d.stepIndex})` : ''}` : '';
    lines.push(lines.length === 0 ? `DIVERGED   ${head}${where}, record ${d.streamSeq}: [${d.kind}] ${d.message}` : `    and${where}, record ${d.streamSeq}: [${d.kind}] ${d.message}`);
    if (d.differences?.length) for (const diff of d.differences) lines.push(`    ${diff}`);
    else {
      lines.push(`    expected (recorded): ${JSON.stringify(d.expected)}`);
      lines.push(`    actual (current):    ${JSON.stringify(d.actual)}`);
    }
  }
  return lines.join('\n');
}

export async function replayCommand(argv: string[], env: ToolEnv): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      data: { type: 'string' },
      'database-url': { type: 'string' },
      config: { type: 'string' },
      execution: { type: 'string' },
      workflow: { type: 'string' },
      live: { type: 'boolean' },
      json: { type: 'boolean' },
      'step-timeout': { type: 'string' },
    },
  });
  const fromStore = values.data !== undefined || values['database-url'] !== undefined;
  if (fromStore === positionals.length > 0) throw new CliError(`name the histories: either --data <dir> or history files, not both\n${REPLAY_USAGE}`);
  let stepTimeoutMs: number | undefined;
  if (values['step-timeout'] !== undefined) {
    stepTimeoutMs = Number(values['step-timeout']);
    if (!Number.isInteger(stepTimeoutMs) || stepTimeoutMs < 1) throw new CliError(`--step-timeout must be a positive integer (ms), got '${values['step-timeout']}'`);
  }
  const configFile = values.config ?? env.defaultConfigFile();
  const config = await loadConfig(configFile).catch((err: Error) => {
    throw new CliError(err.message);
  });
  const definitions = collectDefinitions(configuredWorkflows(config.workflows));

  const wanted = (stream: string) => {
    if (!stream.startsWith(EXECUTION_STREAM_PREFIX)) return false;
    if (values.execution === undefined) return true;
    const own = executionStream(values.execution);
    return stream === own || stream.startsWith(`${own}/`);
  };
  const streams: Array<[string, () => Promise<LogRecord[]>]> = [];
  let close = async () => undefined as void;
  if (fromStore) {
    const source = await openHistorySource({ data: values.data, databaseUrl: values['database-url'] });
    close = source.close;
    for (const { stream } of await source.log.listStreams(EXECUTION_STREAM_PREFIX)) if (wanted(stream)) streams.push([stream, () => source.log.readStream(stream)]);
  } else {
    for (const file of positionals) for (const [stream, records] of readHistoryFile(file)) if (wanted(stream)) streams.push([stream, async () => records]);
  }

  let identical = 0;
  let diverged = 0;
  try {
    for (const [, read] of streams) {
      const records = await read();
      if (records[0]?.type !== 'execution.started') continue;
      if (values.workflow !== undefined && (records[0].data as { workflowId?: string }).workflowId !== values.workflow) continue;
      const report = await replayExecutionHistory(records, { definitions, live: values.live, stepTimeoutMs });
      if (report.result === 'identical') identical++;
      else diverged++;
      console.log(values.json ? JSON.stringify(report) : formatReport(report));
    }
  } finally {
    await close();
  }
  if (identical + diverged === 0) {
    process.stderr.write(`no recorded execution matched${values.execution ? ` --execution ${short(values.execution)}` : ''}${values.workflow ? ` --workflow ${values.workflow}` : ''}\n`);
    return values.execution !== undefined ? 1 : 0;
  }
  process.stderr.write(`replayed ${identical + diverged} execution(s) ${values.live ? 'live ' : ''}against ${configFile}: ${identical} identical, ${diverged} diverged\n`);
  return diverged > 0 ? 1 : 0;
}
