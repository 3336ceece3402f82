/**
 * The kv side stores of the PostgreSQL log: `el_kv` rows of one scope, written in the same
 * transaction as the next batch's records. This node's scope holds what only it uses; the shared
 * scope (`*`) holds the read models every node reads and only the holder of their lease writes
 * (pg-shared-models.ts). The overlay that shows pending writes to readers is OverlayKv's. Keys are
 * stored as UTF-8 bytes (`bytea`): read models separate key parts with U+0000.
 */
import type pg from 'pg';
import { OverlayKv } from '../overlay-kv.js';
import type { PgBatch } from './pg-commit.js';

/** Keys are stored as their UTF-8 bytes: byte order is code point order, and U+0000 is allowed. */
const bytes = (key: string) => Buffer.from(key, 'utf8');

export class PgKv extends OverlayKv {
  constructor(
    private readonly pool: pg.Pool,
    private readonly scope: string,
    private readonly writable: () => PgBatch,
    readable: () => void,
    /** the shared read models' scope: writes go to the batch's shared set, kept only under their lease */
    private readonly sharedScope = false,
  ) {
    super(readable);
  }

  protected async readStored(key: string): Promise<string | undefined> {
    const r = await this.pool.query<{ value: string }>({ name: 'el_kv_get', text: 'SELECT value FROM el_kv WHERE scope = $1 AND key = $2', values: [this.scope, bytes(key)] });
    return r.rows.length ? r.rows[0].value : undefined;
  }

  protected async readStoredMany(keys: readonly string[]): Promise<Array<string | undefined>> {
    const r = await this.pool.query<[Buffer, string]>({
      name: 'el_kv_get_many',
      text: 'SELECT key, value FROM el_kv WHERE scope = $1 AND key = ANY($2::bytea[])',
      values: [this.scope, keys.map(bytes)],
      rowMode: 'array',
    });
    const found = new Map(r.rows.map(([k, v]) => [k.toString('utf8'), v]));
    return keys.map((key) => found.get(key));
  }

  protected async readStoredRange(gte: string, lt: string, reverse: boolean, limit: number): Promise<Array<[string, string]>> {
    const r = await this.pool.query<[Buffer, string]>({
      text: `SELECT key, value FROM el_kv WHERE scope = $1 AND key >= $2 AND key < $3 ORDER BY key ${reverse ? 'DESC' : 'ASC'} LIMIT $4`,
      values: [this.scope, bytes(gte), bytes(lt), limit === Infinity ? null : limit],
      rowMode: 'array',
    });
    return r.rows.map(([k, v]) => [k.toString('utf8'), v]);
  }

  protected write(entries: ReadonlyArray<readonly [key: string, json: string | undefined]>): Promise<void> {
    const batch = this.writable();
    if (this.sharedScope) {
      for (const [key, json] of entries) batch.sharedKv.set(key, json);
      return batch.waitShared();
    }
    for (const [key, json] of entries) batch.kv.set(key, json);
    return batch.wait();
  }
}
