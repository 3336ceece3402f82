/**
 * What a start compiles: the packages behind routes that many servers never serve are loaded by the
 * first request that needs them, not by the start (every module loaded is JavaScript to compile
 * before the first answer). The real CLI runs with a loader hook that records each module it loads.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';

const dirs: string[] = [];
let server: SpawnedServer | undefined;
afterEach(async () => {
  await killSpawned(server);
  server = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('a start of the server', () => {
  it('loads the MCP SDK and the ai SDK only when a request needs them', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-loads-'));
    dirs.push(dir);
    const loads = path.join(dir, 'loads.txt');
    const hook = path.join(import.meta.dirname, 'fixtures', 'record-loads.mjs');
    server = await spawnServer(['--port', '0', '--data', path.join(dir, 'data')], { EVENTLOOM_TEST_LOADS: loads }, 30_000, ['--import', hook]);
    const loaded = () => readFileSync(loads, 'utf8').split('\n');
    expect((await fetch(`${server.url}/agents`)).status).toBe(200);
    const atStart = loaded();
    expect(atStart.some((u) => u.includes('/src/cli/index.ts'))).toBe(true);
    expect(atStart.filter((u) => u.includes('/@modelcontextprotocol/sdk/'))).toEqual([]);
    expect(atStart.filter((u) => u.includes('/node_modules/ai/'))).toEqual([]);

    const init = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } }),
    });
    expect(init.status).toBe(200);
    expect(((await init.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe('eventloom');
    expect(loaded().some((u) => u.includes('/@modelcontextprotocol/sdk/dist/esm/server/'))).toBe(true);
  });
});
