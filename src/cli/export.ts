/**
 * `eventloom export`: writes recorded streams as a portable history file (history-file.ts), from a
 * data directory the server is not running on. Never writes to the source (history-source.ts), nor
 * anywhere inside a data directory (out-path.ts).
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { openHistorySource } from './history-source.js';
import { historyHeader } from '../kernel/history-format.js';
import { normalizeStatus, selectStreams, type StreamSelector } from './select-streams.js';
import { CliError } from './cli-error.js';
import { refuseOutInsideData } from './out-path.js';

export const EXPORT_USAGE = `usage: eventloom export (--data <dir> | --database-url <url>) [--out <file>]
         [--execution <id> | --run <id> | --workflow <id> --status <status> --since <iso time>]
  Writes the selected executions (with their sub-workflows and agent runs) and agent runs as JSON
  lines to --out or stdout. No selector exports everything.`;

export async function exportCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      data: { type: 'string' },
      'database-url': { type: 'string' },
      out: { type: 'string', short: 'o' },
      execution: { type: 'string' },
      run: { type: 'string' },
      workflow: { type: 'string' },
      status: { type: 'string' },
      since: { type: 'string' },
    },
  });
  const sel: StreamSelector = {};
  if (values.execution !== undefined) sel.executionId = values.execution;
  if (values.run !== undefined) sel.runId = values.run;
  if (values.workflow !== undefined) sel.workflowId = values.workflow;
  if (values.status !== undefined) sel.status = normalizeStatus(values.status);
  if (values.since !== undefined) {
    const t = Date.parse(values.since);
    if (!/^\d{4}-\d{2}-\d{2}/.test(values.since) || Number.isNaN(t)) throw new CliError(`--since must be an ISO 8601 time, got '${values.since}'`);
    sel.since = t;
  }
  const single = [sel.executionId, sel.runId].filter((v) => v !== undefined).length;
  if (single > 1 || (single === 1 && (sel.workflowId ?? sel.status ?? sel.since) !== undefined)) {
    throw new CliError('--execution, --run and the filters (--workflow, --status, --since) exclude each other');
  }
  if (values.out !== undefined) refuseOutInsideData(values.out, values.data);
  const source = await openHistorySource({ data: values.data, databaseUrl: values['database-url'] });
  let records = 0;
  let streams: string[];
  try {
    streams = await selectStreams(source.log, sel);
    const out = values.out ? createWriteStream(values.out) : process.stdout;
    // a reader that stops early (`| head`) closes the pipe: stop writing, as Unix tools do
    let closed = false;
    const onError = (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') closed = true;
    };
    out.on('error', onError);
    try {
      await write(out, JSON.stringify(historyHeader(streams.length)) + '\n');
      for (const stream of streams) {
        if (closed) break;
        const lines = (await source.log.readStream(stream)).map((r) => JSON.stringify(r) + '\n');
        records += lines.length;
        await write(out, lines.join(''));
      }
      if (out !== process.stdout) await new Promise<void>((resolve, reject) => (out as WriteStream).end((err?: Error | null) => (err ? reject(err) : resolve())));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EPIPE') throw err;
      closed = true;
    } finally {
      out.off('error', onError);
    }
    if (closed) return 0;
  } finally {
    await source.close();
  }
  process.stderr.write(`exported ${streams.length} stream(s), ${records} record(s) from ${source.label}${values.out ? ` to ${values.out}` : ''}\n`);
  return 0;
}

function write(out: NodeJS.WritableStream, chunk: string): Promise<void> {
  return new Promise((resolve, reject) => {
    out.write(chunk, (err) => (err ? reject(err) : resolve()));
  });
}
