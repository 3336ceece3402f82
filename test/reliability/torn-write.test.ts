/**
 * Torn writes: the real CLI is killed with SIGKILL while group commits write large batches (concurrent
 * memory batches of large messages and workflow executions with large inputs). The data directory must
 * open cleanly and pass the integrity check. A copy of it is then damaged as a power cut could leave it
 * (the LevelDB write-ahead log cut short or its last bytes zeroed at several offsets): every such copy
 * must still open, and the log it holds must be a consistent prefix (gap-free, index matching records).
 * Finally the server restarts on the undamaged directory and every acknowledged write is there once.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync, openSync, writeSync, closeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { checkLogIntegrity, openLevelLog } from '../../src/log/index.js';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { Ledger, rng } from './lib/chaos-load.js';
import { verifyAfterRestart } from './lib/chaos-verify.js';

const CONFIG = path.resolve(import.meta.dirname, 'fixtures', 'chaos.config.ts');
const SEED = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const USER = 'torn-user';
const root = mkdtempSync(path.join(os.tmpdir(), 'eventloom-torn-'));
const dataDir = path.join(root, 'data');
let server: SpawnedServer | undefined;

afterAll(async () => {
  await killSpawned(server);
  rmSync(root, { recursive: true, force: true });
});

async function integrity(dir: string): Promise<{ ok: boolean; records: number; problems: string[] }> {
  const log = await openLevelLog(path.join(dir, 'log'));
  try {
    return await checkLogIntegrity(log);
  } finally {
    await log.close();
  }
}

/**
 * The newest non-empty LevelDB write-ahead log of a data directory: the one holding the last writes.
 * A kill just after the memtable filled can leave the next log created but still empty, while the
 * full one waits for its compaction.
 */
function newestWal(dir: string): string {
  const logDir = path.join(dir, 'log');
  const wals = readdirSync(logDir)
    .filter((f) => /^\d+\.log$/.test(f) && statSync(path.join(logDir, f)).size > 0)
    .sort((a, b) => Number(a.slice(0, -4)) - Number(b.slice(0, -4)));
  return path.join(logDir, wals.at(-1)!);
}

const post = (url: string, p: string, body: unknown) =>
  fetch(`${url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });

it(`opens cleanly after a SIGKILL during large batches, and every torn tail of its write-ahead log leaves a consistent prefix (seed ${SEED})`, async () => {
  const random = rng(SEED);
  const ledger = new Ledger();
  const conversations: string[] = [];
  let recordsBefore = 0;
  for (let round = 0; round < 2; round++) {
    server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG], {}, 30_000);
    const url = server.url;
    const cid = `torn-conv-${round}`;
    expect((await post(url, '/api/memory/conversations', { userId: USER, resourceId: 'assistant', conversationId: cid })).status).toBe(201);
    conversations.push(cid);

    // a burst of large writes: the group commit turns them into a few big LevelDB batches
    const calls: Array<Promise<void>> = [];
    for (let i = 0; i < 60; i++) {
      const messages = Array.from({ length: 8 }, (_, k) => ({ id: `r${round}-m${i}-${k}`, role: 'user', content: `${i}:${k} ${'m'.repeat(4_000)}` }));
      for (const m of messages) ledger.triedMessages.add(m.id);
      calls.push(
        post(url, '/api/memory/save-messages', { userId: USER, conversationId: cid, messages }).then(
          async (r) => {
            if (r.status === 200) for (const m of messages) ledger.ackedMessages.set(m.id, cid);
            else throw new Error(`save-messages answered ${r.status} ${await r.text()}`);
          },
          () => undefined,
        ),
      );
      const id = `r${round}-e${i}`;
      const entry = { id, workflow: 'echo' as const, input: { text: `${id} ${'w'.repeat(20_000)}` } };
      ledger.executions.set(id, entry);
      calls.push(
        post(url, '/workflows/echo/execute', { input: entry.input, options: { executionId: id } }).then(
          async (r) => {
            const body = (await r.json()) as { data?: { status: string; result: unknown } };
            if (r.status === 200) ledger.executions.get(id)!.acked = { status: body.data!.status, result: body.data!.result };
            else throw new Error(`execute answered ${r.status} ${JSON.stringify(body)}`);
          },
          () => undefined,
        ),
      );
    }
    // kill while commits are in full swing: once the first answers are back, after a random moment
    const execAcks = () => [...ledger.executions.values()].filter((e) => e.acked && e.id.startsWith(`r${round}-`)).length;
    const msgAcks = () => [...ledger.ackedMessages.values()].filter((c) => c === cid).length / 8;
    const deadline = Date.now() + 10_000;
    while ((execAcks() < 3 || msgAcks() < 2) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    await new Promise((r) => setTimeout(r, Math.floor(random() * 40)));
    server.child.kill('SIGKILL');
    expect(await server.exited).toBe('SIGKILL');
    await Promise.all(calls);

    // keep the directory exactly as the kill left it (opening it replays and rewrites the WAL)
    const pristine = path.join(root, `pristine-${round}`);
    cpSync(dataDir, pristine, { recursive: true });
    const report = await integrity(dataDir);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);

    // damage copies of the directory as a torn write would, at several points of the WAL's tail
    const wal = newestWal(pristine);
    const size = statSync(wal).size;
    const cuts = [...new Set([size - 1, size - 17, size - 1_000, size - 40_000, Math.floor(size * 0.75), Math.floor(size / 2), Math.floor(random() * size)].filter((n) => n > 0))];
    for (const [i, cut] of cuts.entries()) {
      const copy = path.join(root, `copy-${round}-${i}`);
      cpSync(pristine, copy, { recursive: true });
      const copiedWal = path.join(copy, 'log', path.basename(wal));
      if (i % 2 === 0) truncateSync(copiedWal, cut);
      else {
        // the last bytes never reached the disk: zeros where they should be
        const fd = openSync(copiedWal, 'r+');
        writeSync(fd, Buffer.alloc(size - cut), 0, size - cut, cut);
        closeSync(fd);
      }
      const torn = await integrity(copy);
      expect(torn.problems, `WAL ${i % 2 === 0 ? 'cut' : 'zeroed'} at ${cut} of ${size}`).toEqual([]);
      expect(torn.records).toBeLessThanOrEqual(report.records);
      rmSync(copy, { recursive: true, force: true });
    }
    rmSync(pristine, { recursive: true, force: true });
    // the burst reached the log (the damaged WAL may be short: a memtable switch can start a new one mid-burst)
    expect(report.records).toBeGreaterThan(recordsBefore);
    recordsBefore = report.records;
    console.info(`torn writes round ${round}: ${report.records} records after the kill; WAL ${size} bytes damaged at ${cuts.length} offsets, every copy consistent`);
  }

  // the undamaged directory: every acknowledged write is there, exactly once
  server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG], {}, 30_000);
  const v = await verifyAfterRestart(server.url, ledger, { userId: USER, conversations, readersToResume: 0, resumeSuspended: 0, random });
  expect(v.problems).toEqual([]);
  console.info(`torn writes: ${[...ledger.executions.values()].filter((e) => e.acked).length} executions and ${ledger.ackedMessages.size} messages acknowledged before the kills, all present once`);
}, 120_000);
