/**
 * Open-time damage checks of the LevelDB log on real files: table checksums (and the list of tables
 * already checked), and a torn write-ahead log tail that LevelDB drops, which is warned about but
 * does not stop the log from opening.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LogDamagedError, openLevelLog } from '../../src/log/index.js';
import { checkTables, crc32c, tableProblem } from '../../src/log/level/table-check.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A log whose first records sit in a table (a reopen flushes the write-ahead log) and the rest in the write-ahead log. */
async function makeLog(): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-tables-'));
  dirs.push(dir);
  for (let round = 0; round < 2; round++) {
    const log = await openLevelLog(dir);
    for (let i = 0; i < 200; i++) await log.append(`s-${i % 5}`, [{ type: 't', data: { round, i, pad: randomBytes(200).toString('hex') } }]);
    await log.close();
  }
  return dir;
}

const tables = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.ldb'));

function overwrite(file: string, at: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  writeSync(fd, bytes, 0, bytes.length, at);
  closeSync(fd);
}

it('computes CRC-32C (the Castagnoli checksum LevelDB uses)', () => {
  expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  expect(crc32c(Buffer.alloc(32))).toBe(0x8a9136aa);
});

it('finds a whole table whole, and names the block of a garbled one', async () => {
  const dir = await makeLog();
  const [table] = tables(dir);
  const file = path.join(dir, table);
  expect(tableProblem(readFileSync(file))).toBeUndefined();
  overwrite(file, Math.floor(statSync(file).size / 3), randomBytes(512));
  expect(tableProblem(readFileSync(file))).toMatch(/^the data block at offset \d+ fails its checksum$/);
});

it('checks a table once while it is unchanged, and again once something wrote to it', async () => {
  const dir = await makeLog();
  const [table] = tables(dir);
  const file = path.join(dir, table);
  // a whole-second time, which utimes can set back exactly
  const t = Math.floor(Date.now() / 1000) - 60;
  utimesSync(file, t, t);
  expect(await checkTables(dir)).toEqual([]);
  // same size, same time: remembered as whole, not read again
  overwrite(file, 100, randomBytes(64));
  utimesSync(file, t, t);
  expect(await checkTables(dir)).toEqual([]);
  // written to (a new modification time): checked again
  utimesSync(file, t, t + 5);
  expect(await checkTables(dir)).toEqual([{ file: table, problem: expect.stringContaining('fails its checksum') }]);
});

it('refuses to open a log with a garbled table, naming the file and the repair command', async () => {
  const dir = await makeLog();
  const [table] = tables(dir);
  overwrite(path.join(dir, table), 200, randomBytes(256));
  const err = await openLevelLog(dir, { repairCommand: 'eventloom repair --data /somewhere' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(LogDamagedError);
  expect((err as Error).message).toContain(`table file ${table}:`);
  expect((err as Error).message).toContain('eventloom repair --data /somewhere');
});

it('opens a log whose write-ahead log ends in a damaged record, warning that the tail was dropped and that it held an acknowledged record', async () => {
  const dir = await makeLog();
  const wal = readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .sort()
    .at(-1)!;
  const file = path.join(dir, wal);
  // the last record's bytes half written: it fails its checksum
  const size = statSync(file).size;
  overwrite(file, size - 100, Buffer.alloc(100, 0x55));
  const warnings: string[] = [];
  const log = await openLevelLog(dir, { onWarning: (m) => warnings.push(m) });
  try {
    expect(log.head()).toBe(399);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(
      new RegExp(`^write-ahead log ${wal}: \\d+ bytes could not be read \\(Corruption: checksum mismatch\\); every record before it is intact \\(records 1\\.\\.399 can be read\\)`),
    );
  } finally {
    await log.close();
  }
  // record 400 was acknowledged (its append resolved) before the damage
  expect(warnings[1]).toBe("1 acknowledged record (400) is missing from the end of the log: LevelDB's write-ahead log ends before it (cut short or damaged). The log continues from record 399.");
  // said once: the next open has nothing to report
  const again: string[] = [];
  await (await openLevelLog(dir, { onWarning: (m) => again.push(m) })).close();
  expect(again).toEqual([]);
});
