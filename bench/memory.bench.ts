/**
 * Memory benchmark (`npm run bench:memory`), on the durable LevelDB log in a temp dir, through the
 * `MemoryStore` API (what the routes and agents call):
 *
 * 1. save-messages throughput, durable: concurrent `saveMessages` calls, each acknowledged only
 *    once its record is fsync'd and projected; with the built-in lexical embedder indexing every
 *    message (the default configuration) and with the embedder off. Target ≥ 20,000 messages/s.
 * 2. list a conversation's last 10 messages with MEMORY_BENCH_MESSAGES messages stored (default
 *    1,000,000, in conversations of 1,000): p50/p99 of `listMessages(limit 10)`, from LevelDB (tails
 *    off; right after the load, then compacted) and as configured by default (newest messages of
 *    recently used conversations in memory). Target p99 ≤ 2 ms.
 * 3. semantic search over MEMORY_BENCH_VECTORS vectors of 384 dims (default 100,000): the whole
 *    `search` (embed query, exact scan, read the hits) and the index scan alone. Target ≤ 50 ms.
 *
 * Env: MEMORY_BENCH_MESSAGES, MEMORY_BENCH_VECTORS, MEMORY_BENCH_SAVE (messages of part 1, default
 * 200,000), MEMORY_BENCH_ONLY = save | list | search to run one part.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { openLevelLog, type LevelEventLog } from '../src/log/level/level-log.js';
import { l2normalize } from '../src/memory/embedder.js';
import { MemoryService } from '../src/memory/service.js';
import { InProcessVectorIndex } from '../src/memory/vector-index.js';
import { printMachineInfo } from './lib/machine-info.js';

const num = (name: string, def: number) => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : def;
};
const SAVE_MESSAGES = num('MEMORY_BENCH_SAVE', 200_000);
const STORED_MESSAGES = num('MEMORY_BENCH_MESSAGES', 1_000_000);
const VECTORS = num('MEMORY_BENCH_VECTORS', 100_000);
const PER_CONVERSATION = 1000;
const BATCH = 50;
const CONCURRENCY = 64;

const WORDS = 'the a river stone cloud tiger piano lemon orbit garden window coffee morning train letter silver forest engine winter market'.split(' ');
function sentence(i: number): string {
  let x = (i * 2654435761) >>> 0;
  const n = 6 + (x % 10);
  const out: string[] = [];
  for (let k = 0; k < n; k++) {
    x = Math.imul(x ^ (x >>> 15), 2246822519) >>> 0;
    out.push(WORDS[x % WORDS.length]);
  }
  return out.join(' ');
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (ms: number) => `${ms.toFixed(3)} ms`;

async function withService<T>(memory: unknown, fn: (s: MemoryService, log: LevelEventLog) => Promise<T>, tailMessages?: number): Promise<T> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-memory-bench-'));
  const log = await openLevelLog(dir);
  const service = new MemoryService({ log, memory, env: {}, logger: pino({ level: 'silent' }), agents: () => [], tailMessages });
  await service.start();
  try {
    return await fn(service, log);
  } finally {
    await service.stop();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Saves `total` messages into conversations of PER_CONVERSATION, CONCURRENCY calls in flight. */
async function fill(s: MemoryService, total: number, onProgress?: (done: number) => void): Promise<{ ms: number; conversations: string[] }> {
  const conversations: string[] = [];
  const nConv = Math.ceil(total / PER_CONVERSATION);
  for (let c = 0; c < nConv; c++) conversations.push((await s.store.createConversation({ id: `bench-${c}`, resourceId: 'bench', userId: `user-${c % 100}` })).id);
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (;;) {
      const start = next;
      next += BATCH;
      if (start >= total) return;
      // consecutive batches go to different conversations, so concurrent calls rarely share one
      const conv = Math.floor(start / BATCH) % nConv;
      const count = Math.min(BATCH, total - start);
      const messages = Array.from({ length: count }, (_, k) => ({ role: (start + k) % 2 ? 'assistant' : 'user', content: sentence(start + k) }));
      await s.store.appendMessages(conversations[conv], `user-${conv % 100}`, messages as never);
      if (onProgress && Math.floor((start + count) / 100_000) > Math.floor(start / 100_000)) onProgress(start + count);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { ms: performance.now() - started, conversations };
}

async function saveThroughput(): Promise<void> {
  console.log(`## 1. save-messages, durable (${SAVE_MESSAGES.toLocaleString()} messages, ${BATCH} per call, ${CONCURRENCY} calls in flight)`);
  for (const [label, memory] of [
    ['lexical embedder on (default)', {}],
    ['embedder off', { embedder: false }],
  ] as const) {
    await withService(memory, async (s) => {
      const { ms } = await fill(s, SAVE_MESSAGES);
      console.log(`${label.padEnd(32)} ${Math.round((SAVE_MESSAGES / ms) * 1000).toLocaleString()} messages/s  (${(ms / 1000).toFixed(2)} s)`);
    });
  }
  console.log('target ≥ 20,000 messages/s\n');
}

async function listLatency(): Promise<void> {
  console.log(`## 2. last 10 messages of a conversation, ${STORED_MESSAGES.toLocaleString()} messages stored (${PER_CONVERSATION} per conversation)`);
  // without the in-memory tails: every call reads LevelDB (the row comes from the row cache)
  await withService(
    { embedder: false },
    async (s, log) => {
      const { ms, conversations } = await fill(s, STORED_MESSAGES, (done) => process.stdout.write(`  filled ${done.toLocaleString()}\r`));
      console.log(`filled in ${(ms / 1000).toFixed(1)} s (${Math.round((STORED_MESSAGES / ms) * 1000).toLocaleString()} messages/s, embedder off)`);
      // LevelDB is still compacting what the bulk load wrote: first as is after a pause, then compacted
      await new Promise((r) => setTimeout(r, 3000));
      await measureList(s, conversations, 'LevelDB, 3 s after the load');
      const t0 = performance.now();
      await log.db.compactRange(Buffer.from([0x00]), Buffer.from([0xff]));
      console.log(`(LevelDB compaction of the whole store: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
      await measureList(s, conversations, 'LevelDB, compacted');
    },
    0,
  );
  // the default: the newest messages of recently used conversations are kept in memory
  await withService({ embedder: false }, async (s) => {
    const { conversations } = await fill(s, STORED_MESSAGES, (done) => process.stdout.write(`  filled ${done.toLocaleString()}\r`));
    await new Promise((r) => setTimeout(r, 3000));
    await measureList(s, conversations, 'default (in-memory tails)');
  });
  console.log('target p99 ≤ 2 ms\n');
}

async function measureList(s: MemoryService, conversations: string[], label: string): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < 5000; i++) {
    const cid = conversations[(i * 7919) % conversations.length];
    const t0 = performance.now();
    const msgs = await s.store.listMessages(cid, { limit: 10 });
    const dt = performance.now() - t0;
    if (msgs.length !== 10) throw new Error(`expected 10 messages, got ${msgs.length}`);
    if (i >= 500) times.push(dt); // after warm-up
  }
  times.sort((a, b) => a - b);
  console.log(`listMessages(limit 10), ${label.padEnd(30)} p50 ${fmt(pct(times, 50))}  p99 ${fmt(pct(times, 99))}  max ${fmt(times[times.length - 1])}  (${times.length} calls)`);
}

async function searchLatency(): Promise<void> {
  console.log(`## 3. semantic search over ${VECTORS.toLocaleString()} vectors of 384 dims`);
  // the exact scan alone, on random unit vectors
  const index = new InProcessVectorIndex();
  const rnd = (seed: number) => () => ((seed = Math.imul(seed ^ (seed >>> 15), 2246822519) >>> 0), seed / 2 ** 32 - 0.5);
  const r = rnd(42);
  for (let i = 0; i < VECTORS; i += 1000) {
    const batch = [];
    for (let k = i; k < Math.min(VECTORS, i + 1000); k++)
      batch.push({ conversationId: `c${k % 1000}`, messageId: `m${k}`, userId: `u${k % 100}`, vector: l2normalize(Float32Array.from({ length: 384 }, r)) });
    index.upsert(batch);
  }
  const scan: number[] = [];
  for (let i = 0; i < 60; i++) {
    const q = l2normalize(Float32Array.from({ length: 384 }, r));
    const t0 = performance.now();
    index.query({ vector: q, limit: 10, minCosine: -1 });
    if (i >= 10) scan.push(performance.now() - t0);
  }
  scan.sort((a, b) => a - b);
  console.log(`index scan (${index.simd ? 'WebAssembly SIMD' : 'scalar'}), top 10       p50 ${fmt(pct(scan, 50))}  p99 ${fmt(pct(scan, 99))}`);

  // the whole search through the store: lexical embedding of the query, scan, reading the hits
  await withService({}, async (s) => {
    await fill(s, VECTORS);
    await s.semantic!.settled();
    const times: number[] = [];
    for (let i = 0; i < 60; i++) {
      const t0 = performance.now();
      const results = await s.store.search(sentence(i * 31 + 7), { limit: 10 });
      if (results.length !== 10) throw new Error(`expected 10 results, got ${results.length}`);
      if (i >= 10) times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    console.log(`store.search (embed + scan + read), top 10  p50 ${fmt(pct(times, 50))}  p99 ${fmt(pct(times, 99))}  (index size ${s.index!.size.toLocaleString()})`);
    const userScoped: number[] = [];
    for (let i = 0; i < 60; i++) {
      const t0 = performance.now();
      await s.store.search(sentence(i), { limit: 10, userId: `user-${i % Math.min(100, Math.ceil(VECTORS / PER_CONVERSATION))}` });
      if (i >= 10) userScoped.push(performance.now() - t0);
    }
    userScoped.sort((a, b) => a - b);
    console.log(`store.search scoped to one user              p50 ${fmt(pct(userScoped, 50))}  p99 ${fmt(pct(userScoped, 99))}`);
  });
  console.log('target ≤ 50 ms\n');
}

async function main(): Promise<void> {
  printMachineInfo('memory benchmark');
  const only = process.env.MEMORY_BENCH_ONLY;
  if (!only || only === 'save') await saveThroughput();
  if (!only || only === 'list') await listLatency();
  if (!only || only === 'search') await searchLatency();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
