/**
 * Idempotent starts on the real server: `Idempotency-Key` (or `options.idempotencyKey`) on execute and
 * stream. A repeat with the same input answers like the first call, with `Idempotent-Replayed: true`;
 * another input is a 409; calls racing on one key start one execution, on one node and on two nodes
 * sharing one PostgreSQL store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { collectSse } from '../helpers/sse.js';
import { usePostgres } from '../helpers/postgres.js';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { echoWorkflow, orderApprovalWorkflow } from '../../examples/workflows/index.js';

let t: TestServer;
const execute = (key: string | undefined, input: unknown, options?: Record<string, unknown>, base = t.url) =>
  api(`${base}/workflows/echo/execute`, { method: 'POST', json: { input, ...(options ? { options } : {}) }, headers: key === undefined ? {} : { 'idempotency-key': key } });
const executions = async (base = t.url) => (await api(`${base}/workflows/executions?workflowId=echo&limit=100`)).body;

beforeAll(async () => {
  t = await startTestServer({ workflows: [echoWorkflow, orderApprovalWorkflow] });
});
afterAll(async () => {
  await t.close();
});

describe('idempotent starts', () => {
  it('answers a repeat with the first call’s execution and result, marked Idempotent-Replayed, and starts nothing new', async () => {
    const before = (await executions()).total;
    const first = await execute('order-1', { text: 'hi' });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await execute('order-1', { text: 'hi' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await executions()).total).toBe(before + 1);
  });

  it('takes the key from options.idempotencyKey too, and treats two bodies differing only in key order as one input', async () => {
    const first = await execute(undefined, { text: 'a', delayMs: 0 }, { idempotencyKey: 'opt-1' });
    const again = await execute('opt-1', { delayMs: 0, text: 'a' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.executionId).toBe(first.body.data.executionId);
  });

  it('refuses the same key with another input with a 409 naming the key', async () => {
    await execute('order-2', { text: 'one' });
    const other = await execute('order-2', { text: 'two' });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ success: false, error: 'Idempotency key order-2 was used with another input' });
  });

  it('keeps keys apart per workflow', async () => {
    const echo = await execute('shared-key', { text: 'x' });
    const order = await api(`${t.url}/workflows/order-approval/execute`, { method: 'POST', json: { input: { items: [{ price: 5, qty: 1 }] } }, headers: { 'idempotency-key': 'shared-key' } });
    expect(order.status).toBe(200);
    expect(order.headers.get('idempotent-replayed')).toBeNull();
    expect(order.body.data.executionId).not.toBe(echo.body.data.executionId);
  });

  it('starts one execution for calls racing on one key, and answers them all alike', async () => {
    const before = (await executions()).total;
    const answers = await Promise.all(Array.from({ length: 8 }, () => execute('race-1', { text: 'race', delayMs: 20 })));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((a) => a.body.data.executionId)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect((await executions()).total).toBe(before + 1);
  });

  it('streams a repeat of /stream from the execution’s first event to its result', async () => {
    const stream = (key: string) => collectSse(`${t.url}/workflows/echo/stream`, { method: 'POST', json: { input: { text: 'streamed' } }, headers: { 'idempotency-key': key } });
    const first = await stream('stream-1');
    const again = await stream('stream-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.frames.map((f) => f.data)).toEqual(first.frames.map((f) => f.data));
    expect(first.frames.at(-1)!.event ?? first.frames.at(-1)!.json?.type).toBeDefined();
  });

  it('answers a malformed key or a key beside options.executionId with a 400 naming the problem', async () => {
    const spaced = await execute('has space', { text: 'x' });
    expect(spaced.status).toBe(400);
    expect(spaced.body.error).toMatch(/^Invalid Idempotency-Key/);
    const long = await execute('k'.repeat(256), { text: 'x' });
    expect(long.status).toBe(400);
    const both = await execute('k-1', { text: 'x' }, { executionId: 'mine' });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe('Send either options.executionId or an idempotency key, not both');
  });
});

describe('idempotent starts on two nodes', () => {
  const cluster = usePostgres();
  let dir = '';
  const nodes: SpawnedServer[] = [];
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-idem-'));
  });
  afterAll(async () => {
    for (const n of nodes.splice(0)) {
      n.child.kill('SIGKILL');
      await n.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts one execution when the same key reaches two nodes at once', async () => {
    const url = await cluster().createDatabase();
    const start = (id: string) => spawnServer(['--port', '0', '--data', path.join(dir, id), '--database-url', url, '--node-id', id]);
    nodes.push(await start('a'));
    nodes.push(await start('b'));
    const [a, b] = nodes;
    for (let round = 0; round < 5; round++) {
      const key = `two-nodes-${round}`;
      const answers = await Promise.all([execute(key, { text: 'n' }, undefined, a.url), execute(key, { text: 'n' }, undefined, b.url)]);
      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      expect(answers[0].body.data.executionId).toBe(answers[1].body.data.executionId);
      expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(1);
    }
    const listed = await executions(a.url);
    expect(listed.total).toBe(5);
  }, 120_000);
});
