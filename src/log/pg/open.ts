/**
 * `openPgLog` as the package's entry exports it: the PostgreSQL store and its `pg` driver are loaded
 * on the first call, so importing `eventloom` (every config does) costs a LevelDB server nothing.
 */
import type { PgEventLog, PgLogOptions } from './pg-log.js';

export async function openPgLog(connectionString: string, opts?: PgLogOptions): Promise<PgEventLog> {
  return (await import('./pg-log.js')).openPgLog(connectionString, opts);
}
