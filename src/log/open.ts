/**
 * Opening a log: the one place that turns a store choice into an `EventLog`. The server, the offline
 * tools and tests name the store (`memory`, `level` with its directory, `pg` with its database URL)
 * and get the interface; what the store offers beyond it is read from the log's optional
 * capabilities (capabilities.ts), never from which store was opened. A store's module (and the `pg`
 * driver) is loaded only when that store is opened, so a LevelDB server never loads PostgreSQL's,
 * and importing `eventloom` (every config does) costs nothing of either.
 */
import type { LevelLogOptions } from './level/level-log.js';
import type { MemoryLogOptions } from './memory/memory-log.js';
import type { PgLogOptions } from './pg/pg-log.js';
import type { EventLog } from './types.js';

export type OpenLogOptions =
  /** in this process only: nothing survives it (tests, the testing harness) */
  | ({ store: 'memory' } & MemoryLogOptions)
  /** LevelDB in `dir`: one process at a time (it holds LevelDB's lock) */
  | ({ store: 'level'; dir: string } & LevelLogOptions)
  /** PostgreSQL at `url`, shared by every node that opens it */
  | ({ store: 'pg'; url: string } & PgLogOptions);

export async function openLog(options: OpenLogOptions): Promise<EventLog> {
  switch (options.store) {
    case 'memory': {
      const { store: _, ...opts } = options;
      return (await import('./memory/memory-log.js')).createMemoryLog(opts);
    }
    case 'level': {
      const { store: _, dir, ...opts } = options;
      return (await import('./level/level-log.js')).openLevelLog(dir, opts);
    }
    case 'pg': {
      const { store: _, url, ...opts } = options;
      return (await import('./pg/pg-log.js')).openPgLog(url, opts);
    }
  }
}
