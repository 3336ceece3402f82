/**
 * The kv side store of the LevelDB log (`k` + key → JSON): what is stored, and writes added to the
 * next group commit. The overlay that shows pending writes to readers is OverlayKv's.
 */
import type { ClassicLevel } from 'classic-level';
import type { PendingBatch } from './group-commit.js';
import { KeySpace, decodeStringKey, stringKey } from './key-codec.js';
import { OverlayKv } from '../overlay-kv.js';

export class LevelKv extends OverlayKv {
  constructor(
    private readonly db: ClassicLevel<Buffer, string>,
    private readonly writable: () => PendingBatch<unknown>,
    readable: () => void,
    /** the reopening of the database after a store fault, when one is under way */
    private readonly reopening: () => Promise<void> | undefined,
  ) {
    super(readable);
  }

  protected async readStored(key: string): Promise<string | undefined> {
    const reopening = this.reopening();
    if (reopening) await reopening.catch(() => undefined);
    return this.db.get(stringKey(KeySpace.kv, key));
  }

  protected async readStoredMany(keys: readonly string[]): Promise<Array<string | undefined>> {
    const reopening = this.reopening();
    if (reopening) await reopening.catch(() => undefined);
    return this.db.getMany(keys.map((key) => stringKey(KeySpace.kv, key)));
  }

  protected async readStoredRange(gte: string, lt: string, reverse: boolean, limit: number, once: boolean): Promise<Array<[string, string]>> {
    const reopening = this.reopening();
    if (reopening) await reopening.catch(() => undefined);
    const rows = await this.db.iterator({ gte: stringKey(KeySpace.kv, gte), lt: stringKey(KeySpace.kv, lt), reverse, limit: limit === Infinity ? -1 : limit, fillCache: !once }).all();
    return rows.map(([k, v]) => [decodeStringKey(k), v]);
  }

  protected write(entries: ReadonlyArray<readonly [key: string, json: string | undefined]>): Promise<void> {
    const batch = this.writable();
    for (const [key, json] of entries) batch.keep(stringKey(KeySpace.kv, key), json);
    batch.kvWrites += entries.length;
    return batch.waitKept(undefined);
  }
}
