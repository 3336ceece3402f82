/**
 * Damaged files under a stopped server: a data directory written by the real server (two runs, so
 * that it holds a LevelDB table from the first run and a write-ahead log from the second) is copied
 * and damaged as a faulty disk or a careless hand would: 4 KB garbled in the newest write-ahead log
 * or in a table, either file cut short. `eventloom start` must exit 1 naming the damage and the
 * repair command, or (a cut write-ahead log, which LevelDB reads without complaint) start and say
 * how many acknowledged records are missing. `eventloom repair` must keep what is intact, list what
 * is lost, and leave a log the server starts on and serves.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, cpSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLogIntegrity, openLevelLog, type LogRecord } from '../../src/log/index.js';
import { KeySpace, prefixEnd, recordKey } from '../../src/log/level/key-codec.js';
import type { RepairReport } from '../../src/log/level/repair.js';
import { dataBlocks } from '../../src/log/level/table-check.js';
import { runCli } from '../helpers/run-cli.js';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'eventloom-damage-'));
const pristine = path.join(root, 'pristine');
let server: SpawnedServer | undefined;
/** what the undamaged directory holds, stream by stream */
let original: Map<string, LogRecord[]>;
let originalHead = 0;
const START_TIMEOUT = 60_000;

afterAll(async () => {
  await killSpawned(server);
  rmSync(root, { recursive: true, force: true });
});

const post = (url: string, p: string, body: unknown) =>
  fetch(`${url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });

/** One server run: executions of the echo workflow in small waves (many group commits), then a crash. */
async function run(dir: string, tag: string, executions: number): Promise<void> {
  server = await spawnServer(['--port', '0', '--data', dir], {}, START_TIMEOUT);
  for (let i = 0; i < executions; i += 4) {
    await Promise.all(
      [0, 1, 2, 3].map(async (k) => {
        const res = await post(server!.url, '/workflows/echo/execute', { input: { text: `${tag}-${i + k} ${'x'.repeat(1000)}` }, options: { executionId: `${tag}-${i + k}` } });
        expect(res.status).toBe(200);
      }),
    );
  }
  // SIGKILL, not SIGTERM: a graceful stop also saves the span snapshot (one large key/value write at
  // the end of the write-ahead log), and the damage these tests make must land among the records
  server.child.kill('SIGKILL');
  await server.exited;
  server = undefined;
}

/** Every stream of a log directory with its records (read in-process from a copy: opening writes). */
async function streamsOf(logDir: string): Promise<{ head: number; streams: Map<string, LogRecord[]> }> {
  const copy = mkdtempSync(path.join(root, 'read-'));
  cpSync(logDir, copy, { recursive: true });
  const log = await openLevelLog(copy);
  try {
    const streams = new Map<string, LogRecord[]>();
    for (const r of await log.readGlobal(1)) {
      if (!streams.has(r.stream)) streams.set(r.stream, []);
      streams.get(r.stream)!.push(r);
    }
    return { head: log.head(), streams };
  } finally {
    await log.close();
    rmSync(copy, { recursive: true, force: true });
  }
}

function copyOfPristine(name: string): string {
  const dir = path.join(root, name);
  cpSync(pristine, dir, { recursive: true });
  return dir;
}

function logFiles(dir: string, ext: 'log' | 'ldb'): string[] {
  const logDir = path.join(dir, 'log');
  return readdirSync(logDir)
    .filter((f) => f.endsWith(`.${ext}`) && statSync(path.join(logDir, f)).size > 0)
    .sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
}

/** Overwrites 4 KB in the middle of a file with random bytes. */
function garble(file: string): void {
  const fd = openSync(file, 'r+');
  writeSync(fd, randomBytes(4096), 0, 4096, Math.floor(statSync(file).size / 2));
  closeSync(fd);
}

/**
 * Overwrites 4 KB of a write-ahead log around its middle record. Most of a write-ahead log's bytes are
 * read-model writes (the executions index holds each input under several keys), so 4 KB garbled at a
 * blind offset can miss every record: then nothing acknowledged is lost and a start rightly goes on.
 */
function garbleRecords(file: string): void {
  const bytes = readFileSync(file);
  const marker = Buffer.from('"streamSeq":');
  const hits: number[] = [];
  for (let i = bytes.indexOf(marker); i >= 0; i = bytes.indexOf(marker, i + 1)) hits.push(i);
  expect(hits.length).toBeGreaterThan(0);
  const at = Math.max(0, hits[Math.floor(hits.length / 2)] - 2048);
  const fd = openSync(file, 'r+');
  writeSync(fd, randomBytes(4096), 0, 4096, at);
  closeSync(fd);
}

/** Overwrites the middle data block of a table among those holding only records (key space `r`). */
function garbleTableRecords(file: string): void {
  const blocks = dataBlocks(readFileSync(file));
  const records = blocks.filter((b, i) => b.key[0] === KeySpace.record && i > 0 && blocks[i - 1].key[0] === KeySpace.record);
  expect(records.length).toBeGreaterThan(0);
  const block = records[Math.floor(records.length / 2)];
  const fd = openSync(file, 'r+');
  writeSync(fd, randomBytes(Math.min(512, block.size)), 0, Math.min(512, block.size), block.offset);
  closeSync(fd);
}

const cut = (file: string) => truncateSync(file, Math.floor((statSync(file).size * 2) / 3));

const start = (dir: string) => runCli(['start', '--port', '0', '--data', dir], { timeoutMs: START_TIMEOUT });

/** Starts the server, expecting it to listen; returns it (the caller stops it). */
async function startListening(dir: string): Promise<SpawnedServer> {
  server = await spawnServer(['--port', '0', '--data', dir], {}, START_TIMEOUT);
  return server;
}

async function stop(s: SpawnedServer): Promise<void> {
  s.child.kill('SIGTERM');
  expect(await s.exited, s.output()).toBe(0);
  server = undefined;
}

beforeAll(async () => {
  await run(pristine, 'first', 48);
  await run(pristine, 'second', 48);
  // the first run's records sit in a table, the second's in the write-ahead log
  expect(logFiles(pristine, 'ldb').length).toBeGreaterThan(0);
  expect(statSync(path.join(pristine, 'log', logFiles(pristine, 'log').at(-1)!)).size).toBeGreaterThan(128 * 1024);
  ({ head: originalHead, streams: original } = await streamsOf(path.join(pristine, 'log')));
}, 240_000);

describe('a damaged data directory', () => {
  it('refuses to start on a garbled write-ahead log, naming the file, what can be read and the repair command, at every start', async () => {
    const dir = copyOfPristine('garbled-log');
    const wal = logFiles(dir, 'log').at(-1)!;
    garbleRecords(path.join(dir, 'log', wal));
    for (let attempt = 0; attempt < 2; attempt++) {
      const r = await start(dir);
      expect(r.code, r.output).toBe(1);
      expect(r.stderr).toContain(`write-ahead log ${wal}`);
      expect(r.stderr).toMatch(/records 1\.\.\d+, \d+\.\.\d+ can be read; \d+(\.\.\d+)? (is|are) missing/);
      expect(r.stderr).toContain(`eventloom repair --data ${dir}`);
      expect(r.output).not.toContain('listening');
    }
  }, 120_000);

  it('refuses to start on a garbled table file, naming it and the block that fails its checksum', async () => {
    const dir = copyOfPristine('garbled-table');
    const table = logFiles(dir, 'ldb')[0];
    garble(path.join(dir, 'log', table));
    const r = await start(dir);
    expect(r.code, r.output).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`table file ${table}: the data block at offset \\d+ fails its checksum`));
    expect(r.stderr).toContain(`eventloom repair --data ${dir}`);
  }, 120_000);

  it('refuses to start on a table file cut short, naming it', async () => {
    const dir = copyOfPristine('cut-table');
    const table = logFiles(dir, 'ldb')[0];
    cut(path.join(dir, 'log', table));
    const r = await start(dir);
    expect(r.code, r.output).toBe(1);
    expect(r.stderr).toContain(`table file ${table}: its footer is missing or damaged`);
    expect(r.stderr).toContain(`eventloom repair --data ${dir}`);
  }, 120_000);

  it('starts on a write-ahead log cut short and logs how many acknowledged records are missing from its end', async () => {
    const dir = copyOfPristine('cut-log');
    cut(path.join(dir, 'log', logFiles(dir, 'log').at(-1)!));
    const s = await startListening(dir);
    await stop(s);
    const m = /(\d+) acknowledged records \((\d+)\.\.(\d+)\) are missing from the end of the log/.exec(s.output());
    expect(m, s.output()).not.toBeNull();
    const [lost, from, to] = m!.slice(1).map(Number);
    expect(to).toBe(originalHead);
    expect(lost).toBe(to - from + 1);
    // what the log now holds ends right before the lost records
    const { streams } = await streamsOf(path.join(dir, 'log'));
    const kept = [...streams.values()].flat().filter((r) => r.seq < from);
    expect(kept.length).toBe(from - 1);
    // said once: the next start has nothing new to report
    const again = await startListening(dir);
    await stop(again);
    expect(again.output()).not.toContain('acknowledged record');
  }, 120_000);

  it('exits 1, not 0, when start-up stalls before listening (a gap no check can see stops the projections)', async () => {
    const dir = copyOfPristine('silent-gap');
    const db = new ClassicLevel<Buffer, string>(path.join(dir, 'log'), { keyEncoding: 'buffer', valueEncoding: 'utf8' });
    await db.open();
    await db.del(recordKey(Math.floor(originalHead / 2)), { sync: true });
    // projections fold from the start again, so they reach the hole
    await db.clear({ gte: Buffer.from([KeySpace.checkpoint]), lt: prefixEnd(Buffer.from([KeySpace.checkpoint])) });
    await db.clear({ gte: Buffer.from([KeySpace.kv]), lt: prefixEnd(Buffer.from([KeySpace.kv])) });
    await db.close();
    const r = await start(dir);
    expect(r.code, r.output).toBe(1);
    expect(r.stderr).toContain('start-up stopped before the server listened');
  }, 120_000);
});

describe('eventloom repair', () => {
  async function repair(dir: string): Promise<RepairReport> {
    const r = await runCli(['repair', '--data', dir, '--json'], { timeoutMs: 60_000 });
    expect(r.code, r.output).toBe(0);
    return JSON.parse(r.stdout) as RepairReport;
  }

  const inRanges = (ranges: ReadonlyArray<readonly [number, number]>, seq: number) => ranges.some(([from, to]) => from <= seq && seq <= to);

  /**
   * After a repair: each stream is a prefix of what it was (whole unless the report names it or reports the
   * seqs it lacks as lost without a stream), the server serves them.
   */
  async function expectIntactPartServed(dir: string, report: RepairReport): Promise<void> {
    expect(report.integrity.problems).toEqual([]);
    const after = await streamsOf(path.join(dir, 'log'));
    expect(after.head).toBe(report.head);
    const touched = new Map(report.streams.map((s) => [s.stream, s]));
    let kept = 0;
    const shortened = new Set<string>();
    for (const [stream, records] of original) {
      const now = after.streams.get(stream) ?? [];
      expect(now, stream).toEqual(records.slice(0, now.length));
      const loss = touched.get(stream);
      if (loss) expect(now.length, stream).toBe(loss.kept);
      // a stream the report does not name lost nothing, or only records whose seqs it reports lost with no stream
      // (the index naming their stream went with them)
      else if (now.length > 0) {
        expect(
          records.slice(now.length).filter((r) => !inRanges(report.unattributed, r.seq)),
          stream,
        ).toEqual([]);
        if (now.length < records.length) shortened.add(stream);
      }
      kept += now.length;
    }
    expect(kept).toBe(report.kept);
    // every seq up to the head is a kept record or a repair record in its place
    expect(kept + (after.streams.get(report.repairStream ?? '')?.length ?? 0)).toBe(report.head);

    const s = await startListening(dir);
    try {
      const execStreams = [...after.streams.keys()].filter((k) => k.startsWith('exec:'));
      const res = await fetch(`${s.url}/workflows/executions?limit=500`, { signal: AbortSignal.timeout(15_000) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: Array<{ id: string; status: string }>; total: number };
      expect(body.total).toBe(execStreams.length);
      const listed = new Map(body.data.map((e) => [e.id, e.status]));
      for (const stream of execStreams) {
        const id = stream.slice('exec:'.length);
        if (!touched.has(stream) && !shortened.has(stream)) expect(listed.get(id), id).toBe('completed');
      }
    } finally {
      await stop(s);
    }
  }

  it('keeps the intact records of a garbled write-ahead log, lists what was lost, and leaves a log the server starts on and serves', async () => {
    const dir = copyOfPristine('repair-garbled-log');
    garbleRecords(path.join(dir, 'log', logFiles(dir, 'log').at(-1)!));
    expect((await start(dir)).code).toBe(1);
    const report = await repair(dir);
    expect(report.lostSeqs.length).toBeGreaterThan(0);
    expect(report.streams.length + report.unattributed.length).toBeGreaterThan(0);
    expect(report.kept).toBeLessThan(originalHead);
    // the first run's records were in a table: all kept
    const first = [...original.keys()].filter((s) => s.startsWith('exec:first-'));
    expect(first.length).toBe(48);
    for (const stream of first)
      expect(
        report.streams.find((l) => l.stream === stream),
        stream,
      ).toBeUndefined();
    await expectIntactPartServed(dir, report);
    // the person-readable report names the streams and ranges
    const again = copyOfPristine('repair-garbled-log-text');
    garbleRecords(path.join(again, 'log', logFiles(again, 'log').at(-1)!));
    // as a person would meet it: the start refuses, then the repair it names runs
    expect((await start(again)).code).toBe(1);
    const text = await runCli(['repair', '--data', again], { timeoutMs: 60_000 });
    expect(text.code, text.output).toBe(0);
    expect(text.stdout).toMatch(/lost: records \d+(\.\.\d+)?(, \d+(\.\.\d+)?)* \(\d+\), each replaced by a log\.lost record in \$repair:/);
    expect(text.stdout).toContain('the repaired log passes the integrity check');
  }, 240_000);

  it('keeps the readable part of a garbled table file and lists what it lost', async () => {
    const dir = copyOfPristine('repair-garbled-table');
    const table = logFiles(dir, 'ldb')[0];
    // among its records: a table holds read-model keys too, which a blind offset can hit alone
    garbleTableRecords(path.join(dir, 'log', table));
    const report = await repair(dir);
    expect(report.lostFiles).toEqual([table]);
    expect(report.lostSeqs.length).toBeGreaterThan(0);
    expect(report.kept).toBeLessThan(originalHead);
    // the second run's records were in the write-ahead log: all kept
    for (const stream of [...original.keys()].filter((s) => s.startsWith('exec:second-')))
      expect(
        report.streams.find((l) => l.stream === stream),
        stream,
      ).toBeUndefined();
    await expectIntactPartServed(dir, report);
  }, 240_000);

  it('lists the acknowledged records a cut write-ahead log lost from the end', async () => {
    const dir = copyOfPristine('repair-cut-log');
    cut(path.join(dir, 'log', logFiles(dir, 'log').at(-1)!));
    const report = await repair(dir);
    expect(report.lostTail).toEqual([report.head + 1, originalHead]);
    expect(report.lostSeqs).toEqual([]);
    expect(report.integrity.problems).toEqual([]);
    const text = await runCli(['repair', '--data', dir], { timeoutMs: 60_000 });
    // the first repair set the mark to the repaired head: nothing more is lost
    expect(text.stdout).toContain('nothing was lost');
  }, 120_000);

  it('keeps what a table cut short does not hold and lists the rest as lost', async () => {
    const dir = copyOfPristine('repair-cut-table');
    cut(path.join(dir, 'log', logFiles(dir, 'ldb')[0]));
    const report = await repair(dir);
    expect(report.lostFiles).toEqual([logFiles(pristine, 'ldb')[0]]);
    expect(report.lostSeqs[0][0]).toBe(1);
    // the second run's records were in the write-ahead log: all kept
    const second = [...original.keys()].filter((s) => s.startsWith('exec:second-'));
    expect(second.length).toBe(48);
    for (const stream of second)
      expect(
        report.streams.find((l) => l.stream === stream),
        stream,
      ).toBeUndefined();
    await expectIntactPartServed(dir, report);
  }, 240_000);

  it('answers a missing --data with a usage error and a directory without a log with exit 1, changing nothing', async () => {
    const usage = await runCli(['repair'], { timeoutMs: 30_000 });
    expect(usage.code, usage.output).toBe(2);
    expect(usage.stderr).toContain('name the data directory: --data <dir>');
    const empty = mkdtempSync(path.join(root, 'empty-'));
    const none = await runCli(['repair', '--data', empty], { timeoutMs: 30_000 });
    expect(none.code, none.output).toBe(1);
    expect(none.stderr).toContain(`${empty} holds no event log`);
    expect(readdirSync(empty)).toEqual([]);
  }, 60_000);

  it('refuses to run while a server holds the data directory', async () => {
    const dir = copyOfPristine('repair-locked');
    const s = await startListening(dir);
    try {
      const r = await runCli(['repair', '--data', dir], { timeoutMs: 60_000 });
      expect(r.code, r.output).toBe(1);
      expect(r.stderr).toContain('in use by a running eventloom server');
    } finally {
      await stop(s);
    }
    const log = await openLevelLog(path.join(dir, 'log'));
    try {
      expect(log.head()).toBeGreaterThanOrEqual(originalHead);
      expect((await checkLogIntegrity(log)).ok).toBe(true);
    } finally {
      await log.close();
    }
  }, 120_000);
});
