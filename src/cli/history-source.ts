/**
 * Where the offline tools (`eventloom export`, `eventloom replay`) read recorded histories from: an
 * `EventLog`, so any store that implements the interface plugs in (`--database-url`: the PostgreSQL
 * log, opened read-only). A data directory is read from a
 * private copy of its LevelDB files, never opened in place: LevelDB writes on open (a new write-ahead
 * log and manifest), and the tools promise not to write to their source. A directory whose lock a
 * running server holds is refused before anything is copied, since its files are changing.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openLog } from '../log/open.js';
import { redactUrl } from '../log/pg/unavailable.js';
import { LogLockedError } from '../log/types.js';
import type { EventLog } from '../log/types.js';
import { CliError } from './cli-error.js';

export interface HistorySource {
  log: EventLog;
  /** what was opened, for messages */
  label: string;
  close(): Promise<void>;
}

export interface SourceOptions {
  data?: string;
  databaseUrl?: string;
}

/** The event log of a data directory (the server keeps it in `<data>/log`). */
export function logDirOf(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'log');
}

/**
 * Opens a data directory's log for an offline tool that writes to it (`import`, `rebuild`). A running
 * server holds it: that is the user's mistake to fix, said as such, not a LevelDB error.
 */
export async function openLogForWriting(dataDir: string, doing: string): Promise<EventLog> {
  try {
    return await openLog({ store: 'level', dir: logDirOf(dataDir) });
  } catch (err) {
    if (err instanceof LogLockedError) throw new CliError(`the data directory ${dataDir} is in use by a running eventloom server (LevelDB lock held); stop it before ${doing}`);
    throw err;
  }
}

/**
 * Whether another process (or this one) holds LevelDB's lock on `logDir`. LevelDB takes a POSIX
 * record lock on its LOCK file; Linux lists those in /proc/locks by device and inode. Elsewhere
 * the answer is `undefined` (unknown).
 */
export function isLogLocked(logDir: string): boolean | undefined {
  const lockFile = path.join(logDir, 'LOCK');
  if (!existsSync(lockFile)) return false;
  let locks: string;
  try {
    locks = readFileSync('/proc/locks', 'utf8');
  } catch {
    return undefined;
  }
  const st = statSync(lockFile);
  const major = Number((BigInt(st.dev) >> 8n) & 0xfffn);
  const minor = Number((BigInt(st.dev) & 0xffn) | ((BigInt(st.dev) >> 12n) & 0xfff00n));
  for (const line of locks.split('\n')) {
    const m = /\s([0-9a-f]+):([0-9a-f]+):(\d+)\s/.exec(line);
    if (m && Number(m[3]) === st.ino && parseInt(m[1], 16) === major && parseInt(m[2], 16) === minor) return true;
  }
  return false;
}

/** Opens the history source named by the options (read-only). */
export async function openHistorySource(opts: SourceOptions): Promise<HistorySource> {
  if (opts.databaseUrl !== undefined) return openDatabase(opts.databaseUrl);
  if (opts.data === undefined) throw new CliError('name the history to read: --data <dir> (a server data directory)');
  return openDataDirCopy(opts.data);
}

/** The PostgreSQL log shared by the nodes, opened read-only (it may be in use: its readers see committed records). */
async function openDatabase(url: string): Promise<HistorySource> {
  if (!/^postgres(ql)?:\/\//.test(url)) throw new CliError(`--database-url must start with postgres:// or postgresql://`);
  try {
    const log = await openLog({ store: 'pg', url, readOnly: true, pollMs: 60_000 });
    return { log, label: redactUrl(url), close: () => log.close() };
  } catch (err) {
    throw new CliError((err as Error).message, 1);
  }
}

async function openDataDirCopy(dataDir: string): Promise<HistorySource> {
  const logDir = logDirOf(dataDir);
  if (!existsSync(path.join(logDir, 'CURRENT'))) throw new CliError(`${path.resolve(dataDir)} holds no event log (expected ${logDir})`);
  if (isLogLocked(logDir)) {
    // the server has no export endpoint: name the routes that do read a running server's executions
    throw new CliError(
      `the data directory ${path.resolve(dataDir)} is in use by a running eventloom server (LevelDB lock held); stop it first, ` +
        'or read its executions from the server: GET /workflows/:id/executions/:executionId/state (one execution, every event) or GET /workflows/executions?include=events',
    );
  }
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'eventloom-read-'));
  const copy = path.join(tmp, 'log');
  try {
    cpSync(logDir, copy, { recursive: true });
    // a lock taken while we copied means the files may be torn: refuse rather than read them
    if (isLogLocked(logDir)) throw new CliError(`the data directory ${path.resolve(dataDir)} was opened by a server while it was being read; stop the server and retry`);
    const log = await openLog({ store: 'level', dir: copy });
    return {
      log,
      label: path.resolve(dataDir),
      close: async () => {
        await log.close();
        rmSync(tmp, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}
