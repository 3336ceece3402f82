/**
 * A full disk under a real server process: its data directory is on a small tmpfs the test mounts
 * (root only: `mount -t tmpfs -o size=8m`), filled to the brim by a file of the test. A write then
 * gets 507 `Insufficient storage: …`, reads of what is committed (state, listing, stream) still
 * answer, and once the file is removed writes succeed again without a restart.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnServer, killSpawned, type SpawnedServer } from '../helpers/spawn-server.js';
import { collectSse } from '../helpers/sse.js';
import { until } from '../helpers/until.js';

const isRoot = process.getuid?.() === 0;
let mountPoint: string | undefined;
let server: SpawnedServer | undefined;

afterAll(async () => {
  await killSpawned(server);
  if (mountPoint) {
    execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  }
});

interface Answer {
  status: number;
  body: any;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  return { status: res.status, body: await res.json() };
}

const execute = (id: string) =>
  call(`${server!.url}/workflows/echo/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input: { text: `${id} ${'x'.repeat(2000)}` }, options: { executionId: id } }),
  });

const storeOf = async () => (await call(`${server!.url}/observability/status`, { headers: { 'x-service-dev': 'true' } })).body.data.store;

describe('a full disk under the LevelDB log', () => {
  it.runIf(isRoot)(
    'answers writes 507 while the disk is full, keeps serving committed reads, and takes writes again once space is freed, without a restart (needs root to mount a tmpfs: skipped when not root)',
    async () => {
      mountPoint = mkdtempSync(path.join(os.tmpdir(), 'eventloom-full-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint]);
      const data = path.join(mountPoint, 'data');
      mkdirSync(data);
      server = await spawnServer(['--port', '0', '--data', data], { LOG_LEVEL: 'info' });
      for (let i = 0; i < 5; i++) expect((await execute(`kept-${i}`)).status).toBe(200);
      expect(await storeOf()).toMatchObject({ kind: 'level', state: 'ok' });

      // leave ~256 KiB free: the next few hundred executions run out of space
      const filler = path.join(mountPoint, 'filler');
      const fs = statfsSync(mountPoint);
      writeFileSync(filler, Buffer.alloc(Math.max(0, fs.bavail * fs.bsize - 256 * 1024)));

      let n = 0;
      const full = await until(
        async () => {
          const r = await execute(`fill-${n++}`);
          if (r.status === 200) return undefined;
          return r;
        },
        'a write to meet the full disk',
        30_000,
      );
      expect(full.status).toBe(507);
      expect(full.body.error).toMatch(/^Insufficient storage: /);
      expect(await storeOf()).toMatchObject({ kind: 'level', state: 'full', since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), reason: expect.any(String) });
      // refused at once while full
      const again = await execute('while-full');
      expect(again.status).toBe(507);

      // committed data still reads: state, listing, stream
      const state = await call(`${server.url}/workflows/echo/executions/kept-0/state`);
      expect(state.status).toBe(200);
      expect(state.body.data.status).toBe('completed');
      const list = await call(`${server.url}/workflows/executions?workflowId=echo`);
      expect(list.status).toBe(200);
      const stream = await collectSse(`${server.url}/workflows/echo/executions/kept-1/stream`);
      expect(stream.frames.at(-1)!.json).toMatchObject({ type: 'workflow-result', status: 'completed' });

      rmSync(filler);
      const back = await until(
        async () => {
          const r = await execute(`after-${Date.now()}`);
          return r.status === 200 ? r : undefined;
        },
        'writes to succeed once space is freed',
        30_000,
      );
      expect(back.body.data.status).toBe('completed');
      expect(await storeOf()).toMatchObject({ kind: 'level', state: 'ok' });
      for (let i = 0; i < 5; i++) expect((await call(`${server.url}/workflows/echo/executions/kept-${i}/state`)).body.data.status).toBe('completed');
      const lines = server.output().split('\n');
      expect(lines.filter((l) => l.includes('event store is full')).length).toBeGreaterThanOrEqual(1);
      expect(lines.filter((l) => l.includes('event store is full')).length).toBeLessThan(5);
      expect(lines.filter((l) => l.includes('event store is ok again')).length).toBeGreaterThanOrEqual(1);
      expect(server.child.exitCode).toBeNull();
    },
    90_000,
  );
});
