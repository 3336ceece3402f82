/**
 * Damage checks of a LevelDB log when it opens: what LevelDB drops or cannot read is reported
 * before the log is used, never discovered later as a stalled projection or a silent gap.
 *
 * - Table files are checked against their checksums before LevelDB opens them (table-check.ts).
 * - LevelDB's recovery of its write-ahead log skips what fails a checksum and only says so in its
 *   own `LOG` file ("dropping N bytes"); those lines are read right after the open. A drop that
 *   left every record gap-free is the unfinished tail of a write that was never acknowledged (a
 *   torn write) and only warned about; a drop that left a gap is damage.
 * - Damage found once is remembered in `EVENTLOOM-DAMAGED` until `eventloom repair` clears it:
 *   by the time it is found LevelDB has already folded the damaged write-ahead log into a table,
 *   so a second start would otherwise no longer see anything wrong.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ClassicLevel } from 'classic-level';
import { readAckedMark } from './acked-mark.js';
import { recordKey, readSeq } from './key-codec.js';
import { checkTables, tableProblem, type TableDamage } from './table-check.js';

const DAMAGE_FILE = 'EVENTLOOM-DAMAGED';

/** The log cannot be used as it is: `findings` say what is damaged; `eventloom repair` fixes it. */
export class LogDamagedError extends Error {
  readonly code = 'LOG_DAMAGED';
  constructor(
    readonly location: string,
    readonly findings: string[],
    repairCommand = 'eventloom repair',
  ) {
    super(
      `the event log in ${location} is damaged:\n${findings.map((f) => `  - ${f}`).join('\n')}\n` +
        `No record was written. Stop here and run \`${repairCommand}\`: it keeps every intact record and lists what is lost.`,
    );
    this.name = 'LogDamagedError';
  }
}

interface WalDrop {
  /** write-ahead log file name */
  file: string;
  bytes: number;
  /** LevelDB's reasons, deduplicated */
  reasons: string[];
}

/** The bytes LevelDB's last open dropped from write-ahead logs, per file, read from its `LOG`. */
function walDrops(dir: string): WalDrop[] {
  let text: string;
  try {
    text = readFileSync(path.join(dir, 'LOG'), 'utf8');
  } catch {
    return [];
  }
  const byFile = new Map<string, WalDrop>();
  // e.g. "(ignoring error) /data/log/000006.log: dropping 32768 bytes; Corruption: checksum mismatch"
  for (const m of text.matchAll(/ (\S+\.log): dropping (\d+) bytes; ([^\n]*)/g)) {
    const file = path.basename(m[1]);
    const drop = byFile.get(file) ?? { file, bytes: 0, reasons: [] };
    drop.bytes += Number(m[2]);
    if (!drop.reasons.includes(m[3])) drop.reasons.push(m[3]);
    byFile.set(file, drop);
  }
  return [...byFile.values()];
}

interface SeqScan {
  /** ranges of global seqs present, in order */
  ranges: Array<[number, number]>;
  /** the read error that stopped the scan, if one did */
  error?: string;
}

/** Reads every record key (keys only) and returns the seq ranges present; a read error ends the scan. */
async function scanRecordSeqs(db: ClassicLevel<Buffer, string>): Promise<SeqScan> {
  const ranges: Array<[number, number]> = [];
  const it = db.keys({ gte: recordKey(0), lte: recordKey(Number.MAX_SAFE_INTEGER), fillCache: false });
  try {
    for (;;) {
      const keys = await it.nextv(4096);
      if (keys.length === 0) break;
      for (const key of keys) {
        const seq = readSeq(key, 1);
        const last = ranges[ranges.length - 1];
        if (last && last[1] + 1 === seq) last[1] = seq;
        else ranges.push([seq, seq]);
      }
    }
  } catch (err) {
    return { ranges, error: (err as Error).message };
  } finally {
    await it.close().catch(() => undefined);
  }
  return { ranges };
}

const span = ([lo, hi]: [number, number]) => (lo === hi ? `${lo}` : `${lo}..${hi}`);

/** "records 1..523 and 553..1124 can be read; 524..552 are missing" (and where a read error stops). */
function describeScan(scan: SeqScan): string {
  const { ranges } = scan;
  let text = ranges.length === 0 ? 'no record can be read' : `records ${ranges.map(span).join(', ')} can be read`;
  const missing: Array<[number, number]> = [];
  let next = 1;
  for (const [lo, hi] of ranges) {
    if (lo > next) missing.push([next, lo - 1]);
    next = hi + 1;
  }
  if (missing.length > 0) text += `; ${missing.map(span).join(', ')} ${missing.length === 1 && missing[0][0] === missing[0][1] ? 'is' : 'are'} missing`;
  if (scan.error) text += `; reading stops ${ranges.length ? `after record ${ranges[ranges.length - 1][1]}` : 'at once'}: ${scan.error}`;
  return text;
}

/** True when the scan found the records 1..n (or none) with nothing unreadable. */
const isGapFree = (scan: SeqScan) => !scan.error && (scan.ranges.length === 0 || (scan.ranges.length === 1 && scan.ranges[0][0] === 1));

function rememberDamage(dir: string, findings: string[]): void {
  writeFileSync(path.join(dir, DAMAGE_FILE), findings.join('\n') + '\n');
}

/** Damage found by an earlier open and not repaired since. */
function rememberedDamage(dir: string): string[] {
  if (!existsSync(path.join(dir, DAMAGE_FILE))) return [];
  return readFileSync(path.join(dir, DAMAGE_FILE), 'utf8').split('\n').filter(Boolean);
}

export function forgetDamage(dir: string): void {
  rmSync(path.join(dir, DAMAGE_FILE), { force: true });
}

// ---- the open sequence -------------------------------------------------------------------------

export interface OpenCheckOptions {
  /** the command a person runs to repair this log, named in the error */
  repairCommand?: string;
  /** what is worth knowing but not fatal (a torn write dropped, acknowledged records lost) */
  warn: (message: string) => void;
}

export interface BeforeOpen {
  tables: TableDamage[];
  acked: number | undefined;
}

/** Before LevelDB opens the directory (and folds its write-ahead log into a table): tables and the mark. */
export async function checkBeforeOpen(dir: string): Promise<BeforeOpen> {
  if (!existsSync(dir)) return { tables: [], acked: undefined };
  return { tables: await checkTables(dir), acked: readAckedMark(dir) };
}

/**
 * An error of LevelDB's own open that means damage (a table or manifest it cannot read) becomes a
 * LogDamagedError naming it; anything else is returned unchanged.
 */
export function openError(dir: string, err: unknown, opts: Pick<OpenCheckOptions, 'repairCommand'>): unknown {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? e.code;
  if (code !== 'LEVEL_CORRUPTION' && code !== 'LEVEL_IO_ERROR') return err;
  return new LogDamagedError(dir, [`LevelDB cannot open it: ${e.cause?.message ?? e.message}`], opts.repairCommand);
}

/**
 * Right after LevelDB opened the directory, before anything reads or writes: throws a
 * LogDamagedError (after remembering it) when records are damaged or missing, warns about a torn
 * write that lost nothing acknowledged.
 */
export async function checkAfterOpen(dir: string, db: ClassicLevel<Buffer, string>, before: BeforeOpen, opts: OpenCheckOptions): Promise<void> {
  const findings = [...rememberedDamage(dir)];
  const known = new Set(findings);
  const add = (f: string) => {
    if (known.has(f)) return;
    findings.push(f);
    known.add(f);
  };
  // Checked again now that this process holds the lock: before it, another process could still
  // have been writing the table; a table LevelDB deleted at open was not part of the log.
  for (const t of before.tables) {
    const file = path.join(dir, t.file);
    if (!existsSync(file)) continue;
    const problem = tableProblem(readFileSync(file));
    if (problem) add(`table file ${t.file}: ${problem}; the records it holds cannot be read`);
  }
  const drops = walDrops(dir);
  if (findings.length === 0 && drops.length === 0) return;
  const scan = await scanRecordSeqs(db);
  const dropped = drops.map((d) => `write-ahead log ${d.file}: ${d.bytes} bytes could not be read (${d.reasons.join('; ')})`);
  if (findings.length === 0 && isGapFree(scan)) {
    // What failed its checksum ended the log: an unfinished write, cut by a crash before it was acknowledged.
    for (const d of dropped) opts.warn(`${d}; every record before it is intact (${describeScan(scan)}): the unfinished tail of a write cut by a crash`);
    return;
  }
  for (const d of dropped) add(d);
  add(describeScan(scan));
  rememberDamage(dir, findings);
  throw new LogDamagedError(dir, findings, opts.repairCommand);
}

/** Acknowledged records that LevelDB lost without a word: the head is below the last mark. */
export function checkAckedTail(head: number, before: BeforeOpen, opts: OpenCheckOptions): void {
  if (before.acked === undefined || head >= before.acked) return;
  const lost = before.acked - head;
  opts.warn(
    `${lost} acknowledged record${lost === 1 ? '' : 's'} (${span([head + 1, before.acked])}) ${lost === 1 ? 'is' : 'are'} missing from the end of the log: ` +
      `LevelDB's write-ahead log ends before ${lost === 1 ? 'it' : 'them'} (cut short or damaged). The log continues from record ${head}.`,
  );
}
