/**
 * Retention's archive: the streams a pass removes, written before anything is removed as one file of
 * the portable history format (src/kernel/history-format.ts), `retention-<time>-<nonce>.jsonl` in the
 * archive directory, synced to disk. `eventloom import <file> --data <dir>` restores them.
 */
import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { historyHeader } from '../kernel/history-format.js';
import type { EventLog } from '../log/types.js';
import { READS_IN_FLIGHT, readBounded } from './bounded-reads.js';

/** Writes `streams` (whole, in order) to a new archive file in `dir`; resolves with its path once synced. */
export async function archiveStreams(log: EventLog, dir: string, streams: readonly string[], now: Date, nonce: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `retention-${now.toISOString().replace(/[:.]/g, '-')}-${nonce}.jsonl`);
  const fh = await open(file, 'wx');
  try {
    await fh.write(JSON.stringify(historyHeader(streams.length, now)) + '\n');
    // read a bounded number of streams at a time, written in order
    for (let i = 0; i < streams.length; i += READS_IN_FLIGHT) {
      const chunk = await readBounded(streams.slice(i, i + READS_IN_FLIGHT), (stream) => log.readStream(stream));
      const text = chunk.flatMap((records) => records.map((r) => JSON.stringify(r) + '\n')).join('');
      if (text.length > 0) await fh.write(text);
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
  return file;
}
