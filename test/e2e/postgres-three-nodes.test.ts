/**
 * Three real server processes on one PostgreSQL store: any node serves any request (execute on A,
 * attach the stream on B, resume/cancel/replay on C, listings and memory read on every node right
 * after the acknowledged write, each status naming its node), and a node killed with SIGKILL under
 * load leaves nothing lost or duplicated: its executions finish on the others within the lease
 * plus two seconds.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { usePgNodes, type PgNode } from '../helpers/pg-nodes.js';
import { api } from '../helpers/server.js';
import type { SpawnedServer } from '../helpers/spawn-server.js';
import { collectSse } from '../helpers/sse.js';
import { until } from '../helpers/until.js';

const DEV = { headers: { 'x-service-dev': 'true' } };
const LEASE_MS = 2000;
const { startNodes, db } = usePgNodes({ leaseMs: LEASE_MS, env: { LOG_LEVEL: 'info' }, scope: 'file' });
let nodes: PgNode[] = [];
const post = (n: SpawnedServer, p: string, json: unknown = {}) => api(`${n.url}${p}`, { method: 'POST', json });

beforeAll(async () => {
  nodes = await startNodes(3);
}, 90_000);

async function records(stream: string): Promise<Array<{ type: string; at: number }>> {
  const r = await db().query<{ body: string; stream_seq: number }>('SELECT body, stream_seq FROM el_events WHERE stream = $1 ORDER BY stream_seq', [stream]);
  // no hole, no repeat in the stream's sequence
  expect(r.rows.map((row) => row.stream_seq)).toEqual(r.rows.map((_, i) => i + 1));
  return r.rows.map((row) => JSON.parse(row.body));
}

/** waits as long as a node may take to start, claim or deliver */
const waitFor = <T>(check: () => T | Promise<T>, what: string, ms = 20_000) => until(check, what, ms);

describe('three server processes on one PostgreSQL store', () => {
  it('serve any request on any node: stream on B, resume, cancel and replay on C, listings and memory on every node at once', async () => {
    const [a, b, c] = nodes;
    for (const n of [a, b, c]) {
      const status = await api(`${n.url}/observability/status`, DEV);
      expect(status.body.data.node).toMatchObject({ id: n.id, store: 'postgres' });
    }

    const done = await post(a, '/workflows/echo/execute', { input: { text: 'from a' } });
    expect(done.body.data).toMatchObject({ status: 'completed', result: { text: 'from a' } });
    const id = done.body.data.executionId;
    const byHeader = await collectSse(`${b.url}/workflows/echo/executions/${id}/stream`, { headers: { 'last-event-id': '2' } });
    const byQuery = await collectSse(`${b.url}/workflows/echo/executions/${id}/stream?fromSequence=2`);
    expect(byHeader.frames.map((f) => `${f.id}:${f.event}`)).toEqual(['3:step-complete', '4:workflow-complete', '5:workflow-result']);
    expect(byQuery.frames.map((f) => [f.id, f.data])).toEqual(byHeader.frames.map((f) => [f.id, f.data]));
    // acknowledged on A: listed on B and C by the very next read
    for (const n of [b, c]) {
      expect((await api(`${n.url}/workflows/executions?workflowId=echo`)).body.data.map((e: { id: string }) => e.id)).toContain(id);
    }

    const suspended = await post(a, '/workflows/order-approval/execute', { input: { items: [{ price: 150, qty: 2 }] } });
    expect(suspended.body.data.status).toBe('suspended');
    const sid = suspended.body.data.executionId;
    const resumed = await post(c, `/workflows/order-approval/executions/${sid}/resume`, { resumeData: { approved: true } });
    expect(resumed.body.data).toMatchObject({ status: 'completed', result: { status: 'approved', total: 300 } });
    const replayed = await post(c, `/workflows/order-approval/executions/${sid}/replay`, { stepId: 'manager-approval', resumeData: { approved: false } });
    expect(replayed.body.data).toMatchObject({ status: 'completed', result: { status: 'rejected', total: 300 } });
    expect((await api(`${b.url}/workflows/order-approval/executions/${replayed.body.data.executionId}/state`)).body.data).toMatchObject({ replayedFromExecutionId: sid });

    // running on A, cancelled through C: the command reaches A through the database
    const running = post(a, '/workflows/echo/execute', { input: { text: 'slow', delayMs: 10_000 }, options: { executionId: 'cancel-me' } });
    await waitFor(async () => (await records('exec:cancel-me')).some((r) => r.type === 'step.started'), 'the slow step to start on A');
    expect((await api(`${a.url}/observability/status`, DEV)).body.data.node.owns.executions).toBe(1);
    const cancel = await post(c, '/workflows/echo/executions/cancel-me/cancel', { reason: 'from c' });
    expect(cancel.status).toBe(200);
    expect(cancel.body.data).toMatchObject({ executionId: 'cancel-me', status: 'cancelled', reason: 'from c' });
    expect((await running).body.data).toMatchObject({ status: 'cancelled' });
    expect((await api(`${b.url}/workflows/echo/executions/cancel-me/state`)).body.data.status).toBe('cancelled');

    const created = await post(c, '/api/memory/conversations', { resourceId: 'res', userId: 'u3', title: 'three nodes' });
    expect(created.status).toBe(201);
    const cid = created.body.data.conversation.id;
    for (const n of [a, b]) expect((await api(`${n.url}/api/memory/conversations/${cid}`)).body.data).toMatchObject({ conversation: { id: cid, title: 'three nodes' } });
    expect((await post(a, '/api/memory/save-messages', { userId: 'u3', conversationId: cid, messages: [{ role: 'user', content: 'from a' }] })).status).toBe(200);
    for (const n of [b, c]) {
      expect((await api(`${n.url}/api/memory/conversations/${cid}/messages`)).body.data.messages.map((m: { content: unknown }) => m.content)).toEqual(['from a']);
    }
  }, 45_000);

  it('finishes on the surviving nodes, once each, the executions of a node killed under load, and loses no acknowledged execution', async () => {
    const [a, b, c] = nodes;
    const slow = Array.from({ length: 4 }, (_, i) => `on-b-${i}`);
    for (const id of slow) void post(b, '/workflows/echo/execute', { input: { text: 'slow', delayMs: 2500 }, options: { executionId: id } }).catch(() => undefined);
    await waitFor(async () => (await Promise.all(slow.map((id) => records(`exec:${id}`)))).every((r) => r.some((x) => x.type === 'step.started')), 'the slow steps to start on B');
    // load on A and C across the kill
    const acknowledged: string[] = [];
    let loading = true;
    const load = Promise.all(
      [a, c, a, c].map(async (n, k) => {
        for (let i = 0; loading && i < 400; i++) {
          const r = await post(n, '/workflows/echo/execute', { input: { text: `load ${k}-${i}` } });
          expect(r.status).toBe(200);
          acknowledged.push(r.body.data.executionId);
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    b.child.kill('SIGKILL');
    const killedAt = Date.now();
    const finished = await Promise.all(
      slow.map((id) =>
        waitFor(async () => {
          const recs = await records(`exec:${id}`);
          return recs.at(-1)?.type === 'execution.completed' ? recs : undefined;
        }, `${id} to finish on a surviving node`),
      ),
    );
    loading = false;
    await load;
    for (const recs of finished) {
      const recovered = recs.filter((r) => r.type === 'execution.recovered');
      expect(recovered).toHaveLength(1);
      expect(recovered[0].at - killedAt).toBeLessThanOrEqual(LEASE_MS + 2000);
      expect(recs.filter((r) => r.type === 'execution.completed')).toHaveLength(1);
    }
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const id of acknowledged) {
      const recs = await records(`exec:${id}`);
      expect(recs.filter((r) => r.type === 'execution.completed')).toHaveLength(1);
    }
    const owned = await db().query('SELECT stream FROM el_owners WHERE node_id = $1', [b.id]);
    expect(owned.rows).toEqual([]);
  }, 45_000);
});
