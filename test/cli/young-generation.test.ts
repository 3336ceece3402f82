/**
 * The CLI caps V8's young generation from its first statement (src/runtime/young-generation-cap.ts):
 * started any later, start-up has already grown it to 16–32 MiB, and under load V8 never shrinks it.
 * The real CLI in a child process, its young generation read through its inspector.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { DEFAULT_YOUNG_GENERATION_CAP_BYTES } from '../../src/runtime/young-generation-cap.js';

let server: SpawnedServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await killSpawned(server);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Committed bytes of the process's young generation, read by its inspector at `url`. */
async function youngGenerationBytes(url: string): Promise<number> {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  try {
    const expression = `require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size`;
    ws.send(JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression, includeCommandLineAPI: true, returnByValue: true } }));
    const reply = await new Promise<{ result: { result: { value: number } } }>((resolve) => ws.once('message', (d: Buffer) => resolve(JSON.parse(d.toString()))));
    return reply.result.result.value;
  } finally {
    ws.close();
  }
}

describe('the young generation of a server the CLI starts', () => {
  it('stays within the cap through start-up and a burst of executes', { timeout: 120_000 }, async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventloom-young-'));
    server = await spawnServer(['--port', '0', '--data', dir], {}, 60_000, ['--inspect=127.0.0.1:0']);
    const inspector = /Debugger listening on (ws:\/\/\S+)/.exec(server.output())![1];
    expect(await youngGenerationBytes(inspector)).toBeLessThanOrEqual(DEFAULT_YOUNG_GENERATION_CAP_BYTES);
    const body = JSON.stringify({ input: { text: 'young' } });
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`${server!.url}/workflows/echo/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })));
      for (const r of answers) expect(r.status).toBe(200);
      await Promise.all(answers.map((r) => r.arrayBuffer()));
    }
    expect(await youngGenerationBytes(inspector)).toBeLessThanOrEqual(DEFAULT_YOUNG_GENERATION_CAP_BYTES);
  });
});
