/**
 * What retention tests share: an archive file read back as records by stream, and the two stores
 * a retention property runs on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { openLevelLog } from '../../src/log/level/level-log.js';
import type { EventLog, LogRecord } from '../../src/log/types.js';

/** The records of an archive file (export format), by stream, in file order. */
export function parseArchive(file: string): Map<string, LogRecord[]> {
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
  expect(JSON.parse(lines[0])).toMatchObject({ format: 'eventloom-history', formatVersion: 1 });
  const out = new Map<string, LogRecord[]>();
  for (const line of lines.slice(1)) {
    const r = JSON.parse(line) as LogRecord;
    out.set(r.stream, [...(out.get(r.stream) ?? []), r]);
  }
  return out;
}

/** The stores a retention property runs on: memory, and LevelDB in fresh directories under `root`. */
export function retentionStores(root: string): Array<[string, () => Promise<EventLog>]> {
  let dbs = 0;
  return [
    ['memory', async () => createMemoryLog()],
    ['level', () => openLevelLog(path.join(root, `db-${++dbs}`))],
  ];
}
