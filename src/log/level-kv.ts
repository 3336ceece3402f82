/**
 * The kv side store of the LevelDB log (`k` + key → JSON): what is stored, and writes added to the
 * next group commit. The overlay that shows pending writes to readers is OverlayKv's.
 */
import type { ClassicLevel } from 'classic-level';
import type { PendingBatch } from './group-commit.js';
import { KeySpace, decodeStringKey, stringKey } from './key-codec.js';
import { OverlayKv } from './overlay-kv.js';

export class LevelKv extends OverlayKv {
  constructor(
    private readonly db: ClassicLevel<Buffer, string>,
    private readonly writable: () => PendingBatch<unknown>,
    readable: () => void,
  ) {
    super(readable);
  }

  protected readStored(key: string): Promise<string | undefined> {
    return this.db.get(stringKey(KeySpace.kv, key));
  }

  protected async readStoredRange(gte: string, lt: string, reverse: boolean, limit: number): Promise<Array<[string, string]>> {
    const rows = await this.db.iterator({ gte: stringKey(KeySpace.kv, gte), lt: stringKey(KeySpace.kv, lt), reverse, limit: limit === Infinity ? -1 : limit }).all();
    return rows.map(([k, v]) => [decodeStringKey(k), v]);
  }

  protected write(key: string, json: string | undefined): Promise<void> {
    const batch = this.writable();
    if (json === undefined) batch.del(stringKey(KeySpace.kv, key));
    else batch.put(stringKey(KeySpace.kv, key), json);
    batch.kvWrites++;
    return batch.wait<void>(undefined);
  }
}
