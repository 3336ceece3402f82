/**
 * Reopening a LevelDB log keeps everything: records, stream heads, checkpoints and kv, including
 * writes still pending when `close()` was called.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLogIntegrity } from '../../src/log/integrity.js';
import { openLevelLog } from '../../src/log/level/level-log.js';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { EventLog } from '../../src/log/types.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eventloom-level-reopen-'));
let dirs = 0;
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const opArb = fc.oneof(
  fc.record({
    op: fc.constant('append' as const),
    stream: fc.constantFrom('exec:1', 'exec:2', 'run:1', 'conv:é😀'),
    records: fc.array(fc.record({ type: fc.constantFrom('a', 'b.c'), data: fc.jsonValue({ maxDepth: 2 }) }), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ op: fc.constant('put' as const), key: fc.constantFrom('k1', 'k2', 'idx:1', 'idx:2'), value: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({ op: fc.constant('del' as const), key: fc.constantFrom('k1', 'k2', 'idx:1', 'idx:2') }),
  fc.record({ op: fc.constant('checkpoint' as const), name: fc.constantFrom('p1', 'p2'), seq: fc.nat({ max: 1000 }) }),
);

/** Everything observable about a log, for comparison across a reopen. */
async function snapshot(log: EventLog) {
  const streams = await log.listStreams('');
  return {
    head: log.head(),
    records: await log.readGlobal(1),
    streams,
    perStream: await Promise.all(streams.map(async (s) => [await log.streamHead(s.stream), await log.readStream(s.stream)])),
    kv: await log.kv.range({ gte: '', lt: '\u{10ffff}' }),
    checkpoints: [await log.getCheckpoint('p1'), await log.getCheckpoint('p2')],
  };
}

describe('level log reopen property', () => {
  it('keeps records, heads, checkpoints and kv across close and reopen', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 25 }), fc.nat(), async (ops, awaitedCount) => {
        const dir = path.join(root, `db-${++dirs}`);
        const log = await openLevelLog(dir);
        // The first ops are awaited one by one; the rest are still pending when close() is called.
        const awaited = awaitedCount % (ops.length + 1);
        const pending: Promise<unknown>[] = [];
        for (let i = 0; i < ops.length; i++) {
          const o = ops[i];
          const p = o.op === 'append' ? log.append(o.stream, o.records) : o.op === 'put' ? log.kv.put(o.key, o.value) : o.op === 'del' ? log.kv.del(o.key) : log.setCheckpoint(o.name, o.seq);
          if (i < awaited) await p;
          else pending.push(p);
        }
        await log.close();
        await Promise.all(pending);
        const reopenedLater = await openLevelLog(dir);
        const after = await snapshot(reopenedLater);
        expect(await checkLogIntegrity(reopenedLater)).toMatchObject({ ok: true });
        await reopenedLater.close();

        // The same operations applied in order to the in-memory reference log give the same state.
        const reference = createMemoryLog();
        for (const o of ops) {
          if (o.op === 'append') await reference.append(o.stream, o.records);
          else if (o.op === 'put') await reference.kv.put(o.key, o.value);
          else if (o.op === 'del') await reference.kv.del(o.key);
          else await reference.setCheckpoint(o.name, o.seq);
        }
        const want = await snapshot(reference);
        await reference.close();
        // Records carry the wall-clock `at` of their append: compare everything else.
        const strip = (s: typeof after) => JSON.parse(JSON.stringify(s, (k, v) => (k === 'at' ? 0 : v)));
        expect(strip(after)).toEqual(strip(want));
      }),
      { numRuns: 15 },
    );
  });
});
