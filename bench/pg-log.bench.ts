/**
 * PostgreSQL event log benchmark (`npm run bench:pglog`): a throwaway PostgreSQL cluster on
 * loopback (fsync on), writer processes appending through the real `PgEventLog`, and a follower
 * process measuring when each record reaches it (`Date.now()` in the record, same clock):
 * 1. cross-process delivery latency at a low rate (one writer, one append every 5 ms);
 * 2. aggregate durable appends from three writer processes of 32 concurrent appenders each, and the
 *    delivery latency to the follower under that load.
 * Bounded (< 30 s), cleaned up. Figures, never pass/fail.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { openPgLog } from '../src/log/pg/pg-log.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { printMachineInfo } from './lib/machine-info.js';

const WRITER = path.join(import.meta.dirname, 'lib', 'pg-log-writer.ts');

function writer(url: string, id: string, mode: 'paced' | 'load'): Promise<{ appends: number; batches: number; maxBatchAppends: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, url, id, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`writer ${id} exited with ${code}`))));
  });
}

const quantile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

printMachineInfo('PostgreSQL event log');
const cluster = await startPostgres();
try {
  const url = await cluster.createDatabase();
  const follower = await openPgLog(url, { scope: 'follower' });
  let latencies: number[] = [];
  let received = 0;
  follower.subscribe(0, (r) => {
    received++;
    latencies.push(Date.now() - (r.data as { t: number }).t);
  });

  await writer(url, 'paced', 'paced');
  await follower.shared.catchUp();
  latencies.sort((a, b) => a - b);
  console.log(`delivery to another process, 1 writer at ~150 appends/s: p50 ${quantile(latencies, 0.5)} ms, p99 ${quantile(latencies, 0.99)} ms (n=${latencies.length})`);

  latencies = [];
  const before = received;
  const results = await Promise.all(['a', 'b', 'c'].map((id) => writer(url, id, 'load')));
  await follower.shared.catchUp();
  latencies.sort((a, b) => a - b);
  const appends = results.reduce((n, r) => n + r.appends, 0);
  console.log(
    `durable appends, 3 processes x 32 appenders, 5 s: ${Math.round(appends / 5).toLocaleString('en-US')} records/s (${appends} acknowledged, ${received - before} delivered to the follower)`,
  );
  console.log(`  batches per writer: ${results.map((r) => r.batches).join(', ')}; largest batch: ${Math.max(...results.map((r) => r.maxBatchAppends))} appends`);
  console.log(`delivery to another process under that load: p50 ${quantile(latencies, 0.5)} ms, p99 ${quantile(latencies, 0.99)} ms`);
  await follower.close();
} finally {
  await cluster.stop();
}
