/**
 * The probe a failed LevelDB log runs before it reopens its database (level-log.ts): a reopen on a
 * device without room fails half-way and leaves the database closed, so the log first checks that
 * the device has room for what LevelDB writes when it opens (its write-ahead logs turned into a
 * table) and that a file can be written and synced there at all.
 */
import { open, readdir, stat, statfs, unlink } from 'node:fs/promises';
import path from 'node:path';

const PROBE_FILE = '.eventloom-write-probe';
const PROBE_BYTES = 64 * 1024;

/** Resolves when `dir` looks writable with room to reopen; throws the file system's error (ENOSPC, EIO, EROFS) otherwise. */
export async function probeDirectory(dir: string, headroomBytes: number): Promise<void> {
  let walBytes = 0;
  for (const name of await readdir(dir)) {
    if (name.endsWith('.log')) walBytes += (await stat(path.join(dir, name)).catch(() => ({ size: 0 }))).size;
  }
  const fsStats = await statfs(dir);
  const free = Number(fsStats.bavail) * Number(fsStats.bsize);
  const needed = walBytes + headroomBytes;
  if (free < needed) {
    throw Object.assign(new Error(`no space left on device: ${free} bytes free, ${needed} needed to reopen the event log`), { code: 'ENOSPC' });
  }
  const file = path.join(dir, PROBE_FILE);
  const handle = await open(file, 'w');
  try {
    await handle.write(Buffer.alloc(PROBE_BYTES));
    await handle.sync();
  } finally {
    await handle.close();
    await unlink(file).catch(() => undefined);
  }
}
