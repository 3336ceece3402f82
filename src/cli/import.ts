/**
 * `eventloom import`: loads history files (from `eventloom export`) into a data directory. All or
 * nothing: every stream is checked first (a well-formed name whose ids its records agree with,
 * stream-agreement.ts; every record accepted in order by the machine kind and version it names;
 * not present in the target with other records), and only then is anything written. Each stream
 * goes in as one atomic append, keeping types, data, times and kinds; global sequences are the
 * target's. A stream already present with the same records is skipped, so an import cut short
 * (a crash) completes when run again. The server must not be running on the target.
 */
import { mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { LogRecord, NewRecord } from '../log/types.js';
import type { ActorKind } from '../runtime/actor-host.js';
import { pureInitialTransition, pureTransition } from '../runtime/pure-transition.js';
import { WORKFLOW_EXECUTION_KIND, WORKFLOW_EXECUTION_VERSION, workflowExecutionMachine } from '../../machines/workflow-execution.machine.js';
import { AGENT_RUN_KIND, AGENT_RUN_STARTED, AGENT_RUN_VERSION, agentRunMachine } from '../../machines/agent-run.machine.js';
import { readHistoryFile, type History } from './history-file.js';
import { logDirOf, openLogForWriting } from './history-source.js';
import { CliError } from './cli-error.js';
import { checkStreamAgreement } from './stream-agreement.js';

export const IMPORT_USAGE = `usage: eventloom import <file.jsonl>... --data <dir>
  Loads exported histories into a data directory (created if needed). Stop the server on it first.`;

/** The machines whose streams a history may hold, by the kind@version their first record names. */
const KINDS: ReadonlyMap<string, ActorKind> = new Map<string, ActorKind>([
  [
    `${WORKFLOW_EXECUTION_KIND}@${WORKFLOW_EXECUTION_VERSION}`,
    { kind: WORKFLOW_EXECUTION_KIND, version: WORKFLOW_EXECUTION_VERSION, logic: workflowExecutionMachine, createdType: 'execution.started' },
  ],
  [`${AGENT_RUN_KIND}@${AGENT_RUN_VERSION}`, { kind: AGENT_RUN_KIND, version: AGENT_RUN_VERSION, logic: agentRunMachine, createdType: AGENT_RUN_STARTED }],
]);

/** Refuses a stream the server could not take: unknown kind, a name or id out of place, a record its machine rejects. */
function checkStream(stream: string, records: LogRecord[]): void {
  const kind = KINDS.get(records[0].kind ?? '');
  if (!kind) throw new CliError(`${stream}: machine ${records[0].kind} is not one this build knows (${[...KINDS.keys()].join(', ')})`, 1);
  checkStreamAgreement(stream, records);
  if (records[0].type !== kind.createdType) throw new CliError(`${stream}: the first record of a ${kind.kind} stream must be ${kind.createdType}, got ${records[0].type}`, 1);
  let [snapshot] = pureInitialTransition(kind.logic, records[0].data);
  for (const r of records.slice(1)) {
    const event = { ...(r.data as object), type: r.type };
    const snap = snapshot as unknown as { can(e: unknown): boolean; value: unknown };
    if (!snap.can(event)) throw new CliError(`${stream}: record ${r.streamSeq} '${r.type}' is not accepted by ${records[0].kind} in state ${JSON.stringify(snap.value)}`, 1);
    [snapshot] = pureTransition(kind.logic, snapshot, event);
  }
}

const toNew = (r: LogRecord): NewRecord => ({
  type: r.type,
  data: r.data,
  at: r.at,
  ...(r.kind !== undefined ? { kind: r.kind } : {}),
  ...(r.causation !== undefined ? { causation: r.causation } : {}),
  ...(r.correlation !== undefined ? { correlation: r.correlation } : {}),
});

const same = (a: LogRecord, b: LogRecord) => JSON.stringify(toNew(a)) === JSON.stringify(toNew(b));

export async function importCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, strict: true, allowPositionals: true, options: { data: { type: 'string' } } });
  if (positionals.length === 0) throw new CliError(`name at least one history file\n${IMPORT_USAGE}`);
  if (values.data === undefined) throw new CliError(`name the target: --data <dir>\n${IMPORT_USAGE}`);
  const history: History = new Map();
  for (const file of positionals) {
    for (const [stream, records] of readHistoryFile(file)) {
      const seen = history.get(stream);
      if (seen && (seen.length !== records.length || seen.some((r, i) => !same(r, records[i])))) throw new CliError(`${stream} appears twice with different records`, 1);
      history.set(stream, records);
    }
  }
  for (const [stream, records] of history) checkStream(stream, records);
  mkdirSync(logDirOf(values.data), { recursive: true });
  const log = await openLogForWriting(values.data, 'importing');
  let skipped = 0;
  let recordCount = 0;
  const toWrite: Array<[string, LogRecord[]]> = [];
  try {
    // the source's global order between streams is kept: streams go in by their first record's seq
    const ordered = [...history].sort((a, b) => a[1][0].seq - b[1][0].seq);
    // every stream is compared with the target before the first write: a refusal leaves the target as it was
    for (const [stream, records] of ordered) {
      if ((await log.streamHead(stream)) === 0) {
        toWrite.push([stream, records]);
        continue;
      }
      const existing = await log.readStream(stream);
      if (existing.length !== records.length || !existing.every((r, i) => same(r, records[i]))) {
        throw new CliError(`${stream} already exists in ${values.data} with other records; nothing was imported`, 1);
      }
      skipped++;
    }
    for (const [stream, records] of toWrite) {
      await log.append(stream, records.map(toNew), { expectedStreamSeq: 0 });
      recordCount += records.length;
    }
  } finally {
    await log.close();
  }
  process.stderr.write(`imported ${toWrite.length} stream(s), ${recordCount} record(s) into ${values.data}${skipped ? `; ${skipped} already present` : ''}\n`);
  return 0;
}
