/**
 * `eventloom repair --data <dir>`: repairs a damaged event log in place (src/log/level/repair.ts) and
 * prints what was kept and what was lost. Refuses while a server holds the data directory.
 * Exit codes: 0 repaired (even with losses), 1 the repair failed, 2 a usage error.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repairLog, type RepairReport, type SeqRange } from '../log/level/repair.js';
import { LogLockedError } from '../log/types.js';
import { CliError } from './cli-error.js';
import { isLogLocked, logDirOf } from './history-source.js';

export const REPAIR_USAGE = `usage: eventloom repair --data <dir> [--json]
  Repairs a damaged event log in place: keeps every record that can still be read, puts a log.lost
  record where one cannot, rebuilds the stream index and read models, and lists what was lost.
  Stop the server on the directory first; keep a copy of it if you can.`;

const span = ([a, b]: SeqRange) => (a === b ? `${a}` : `${a}..${b}`);
const spans = (r: SeqRange[]) => r.map(span).join(', ');
const count = (r: SeqRange[]) => r.reduce((n, [a, b]) => n + b - a + 1, 0);

/** The report as a person reads it. */
function describeRepair(r: RepairReport): string {
  const lines = [`repaired ${r.location}`];
  if (r.lostFiles.length) lines.push(`  damaged table files ${r.lostFiles.join(', ')}: what could be read from them was kept, the files were moved to ${path.join(r.location, 'lost')}`);
  lines.push(`  ${r.readable} records readable, ${r.kept} kept in their streams; the log now ends at record ${r.head}`);
  if (r.lostSeqs.length === 0 && !r.lostTail && r.streams.length === 0) lines.push('  nothing was lost');
  if (r.lostSeqs.length) lines.push(`  lost: records ${spans(r.lostSeqs)} (${count(r.lostSeqs)}), each replaced by a log.lost record in ${r.repairStream}`);
  if (r.lostTail) lines.push(`  lost from the end: records ${span(r.lostTail)} (${count([r.lostTail])}), acknowledged before the damage`);
  if (r.unattributed.length) lines.push(`  records ${spans(r.unattributed)}: nothing left names their streams (the stream lines below show the holes each stream has)`);
  for (const s of r.streams) {
    let line = `  stream ${s.stream}: ${s.kept === 0 ? 'keeps no record' : `keeps streamSeq 1..${s.kept}`}`;
    if (s.lost.length) line += `, lost ${spans(s.lost)}`;
    if (s.setAside.length) line += `, set aside ${spans(s.setAside)} (after a lost record; kept whole as log.set-aside records in ${r.repairStream})`;
    lines.push(line);
  }
  lines.push('  read models (projections) are rebuilt from the log at the next start');
  lines.push(r.integrity.ok ? '  the repaired log passes the integrity check' : `  the repaired log still fails the integrity check:\n${r.integrity.problems.map((p) => `    ${p}`).join('\n')}`);
  return lines.join('\n');
}

export async function repairCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, strict: true, options: { data: { type: 'string' }, json: { type: 'boolean' } } });
  if (values.data === undefined) throw new CliError(`name the data directory: --data <dir>\n${REPAIR_USAGE}`);
  const dataDir = path.resolve(values.data);
  const logDir = logDirOf(dataDir);
  if (!existsSync(logDir)) throw new CliError(`${dataDir} holds no event log (expected ${logDir})`, 1);
  let report: RepairReport;
  try {
    report = await repairLog(logDir, { locked: isLogLocked });
  } catch (err) {
    if (err instanceof LogLockedError) throw new CliError(`the data directory ${dataDir} is in use by a running eventloom server (LevelDB lock held); stop it before repairing`, 1);
    throw new CliError((err as Error).message, 1);
  }
  if (values.json) console.log(JSON.stringify(report));
  else console.log(describeRepair(report));
  return report.integrity.ok ? 0 : 1;
}
