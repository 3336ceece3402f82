/**
 * The removal contract (test/contract/removal.contract.ts) on the in-memory and LevelDB stores, and
 * what only LevelDB does: compaction gives the removed records' disk space back.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { openLevelLog, type LevelEventLog } from '../../src/log/level/level-log.js';
import type { EventLog } from '../../src/log/types.js';
import { runRemovalContract } from '../contract/removal.contract.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eventloom-removal-'));
let dirs = 0;
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

runRemovalContract('memory', { open: async () => createMemoryLog() });

runRemovalContract('level', {
  open: () => openLevelLog(path.join(root, `db-${++dirs}`)),
  reopen: async (log: EventLog) => {
    await log.close();
    return openLevelLog((log as LevelEventLog).location);
  },
});

const dirBytes = (dir: string) => fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);

describe('level log removal', () => {
  it('gives the disk space of removed streams back once compacted, and says so in storedBytes', async () => {
    const dir = path.join(root, `db-${++dirs}`);
    const log = await openLevelLog(dir, { writeBufferSize: 64 * 1024 });
    const payload = 'x'.repeat(2000);
    for (let i = 0; i < 400; i++) await log.append(`exec:${String(i).padStart(4, '0')}`, [{ type: 'execution.started', data: payload, kind: 'wf@1' }]);
    await log.db.compactRange(Buffer.from([0]), Buffer.from([0xff]));
    const full = dirBytes(dir);
    expect(await log.removal!.storedBytes!()).toBe(full);
    // in one call, many streams per write, more streams than one read-ahead window
    expect(
      await log.removal!.removeStreams(
        Array.from({ length: 360 }, (_, i) => `exec:${String(i).padStart(4, '0')}`),
        50,
      ),
    ).toBe(360);
    await log.removal!.compact();
    const after = dirBytes(dir);
    expect(after, `${full} bytes before removal, ${after} after compaction`).toBeLessThan(full / 2);
    expect(await log.removal!.storedBytes!()).toBe(after);
    expect((await log.listStreams('exec:')).length).toBe(40);
    await log.close();
  });

  it('removes more streams than one read-ahead window in one call, whatever the batch', async () => {
    const log = await openLevelLog(path.join(root, `db-${++dirs}`));
    const ids = Array.from({ length: 1300 }, (_, i) => `exec:${String(i).padStart(5, '0')}`);
    await Promise.all(
      ids.map((s, i) =>
        log.append(
          s,
          Array.from({ length: 1 + (i % 3) }, (_, j) => ({ type: 't', data: j })),
        ),
      ),
    );
    await log.append('exec:keep', [{ type: 't', data: 0 }]);
    const total = ids.reduce((t, _, i) => t + 1 + (i % 3), 0);
    expect(await log.removal!.removeStreams([...ids].reverse(), 7)).toBe(total);
    expect((await log.listStreams('exec:')).map((s) => s.stream)).toEqual(['exec:keep']);
    expect(await log.removal!.removedRecords()).toBe(total);
    expect((await log.integrity!.check()).problems).toEqual([]);
    await log.close();
  });
});
