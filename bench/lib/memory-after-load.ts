/**
 * Part (c) of bench:workflows: what the server's memory consists of once a burst of executions has
 * stopped. The server side adds benchmark-only routes (`benchMemoryRoutes`): `GET /bench/memory`
 * reads `process.memoryUsage()` and V8's heap spaces without collecting, `POST /bench/gc` forces a
 * full collection (the child runs with --expose-gc), `POST /bench/heap-snapshot` writes a V8 heap
 * snapshot (compare two with bench/heap-diff.ts). The client side samples RSS (split into anonymous
 * and file-backed pages from /proc/<pid>/smaps_rollup) at fixed times after the load, as the load
 * leaves it, and then after a forced collection.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';

export interface MemorySample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** committed bytes per V8 heap space (new, old, code, large object …) */
  spaces: Record<string, { size: number; used: number }>;
  /** LevelDB's own estimate of its memtables and block cache */
  storage: number;
}

function sample(storage: () => number): MemorySample {
  const m = process.memoryUsage();
  const spaces: MemorySample['spaces'] = {};
  for (const s of v8.getHeapSpaceStatistics()) spaces[s.space_name] = { size: s.space_size, used: s.space_used_size };
  return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, spaces, storage: storage() };
}

/** The benchmark's own routes on the server child (custom routes of the config). */
export function benchMemoryRoutes(snapshotDir: string | undefined, storage: () => number) {
  const gc = (globalThis as { gc?: () => void }).gc;
  let n = 0;
  return [
    { method: 'GET' as const, path: '/bench/memory', handler: () => sample(storage) },
    ...(gc ? [{ method: 'POST' as const, path: '/bench/gc', handler: () => (gc(), gc(), sample(storage)) }] : []),
    ...(snapshotDir ? [{ method: 'POST' as const, path: '/bench/heap-snapshot', handler: () => ({ file: v8.writeHeapSnapshot(path.join(snapshotDir, `server-${++n}.heapsnapshot`)) }) }] : []),
  ];
}

/** Resident pages of a process from /proc/<pid>/smaps_rollup, in MiB. */
export function residentMiB(pid: number): { rss: number; anon: number; file: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (name: string) => Number(text.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
  return { rss: kb('Rss') / 1024, anon: kb('Anonymous') / 1024, file: (kb('Rss') - kb('Anonymous')) / 1024 };
}

/** A progress line on stderr (stdout carries the figures). */
export const note = (msg: string) => process.stderr.write(`  … ${msg}\n`);

const mib = (n: number) => (n / 2 ** 20).toFixed(1);

/** One line: RSS (anonymous / file), V8 heap used of committed, external, the largest spaces. */
export function describeMemory(label: string, pid: number, m: MemorySample): string {
  const r = residentMiB(pid);
  const spaces = Object.entries(m.spaces)
    .filter(([, s]) => s.size > 1 << 20)
    .map(([name, s]) => `${name.replace(/_space$/, '')} ${mib(s.used)}/${mib(s.size)}`)
    .join(', ');
  return `${label.padEnd(26)} RSS ${r.rss.toFixed(1)} MiB (anon ${r.anon.toFixed(1)}, file ${r.file.toFixed(1)}); V8 heap ${mib(m.heapUsed)} used of ${mib(m.heapTotal)} MiB [${spaces}]; external ${mib(m.external)} (array buffers ${mib(m.arrayBuffers)}); LevelDB ${mib(m.storage)}; outside V8 heap ${(r.rss - m.heapTotal / 2 ** 20).toFixed(1)} MiB`;
}
