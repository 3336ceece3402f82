/**
 * The read models PostgreSQL nodes share (executions index, agent history), with real server
 * processes: the node that folds them is killed with SIGKILL, another node takes their lease over
 * and its listings include what was executed after the kill; a node that joins later, under a new
 * id, lists every execution at once. Memory is shared the same way: saved on either node, listed and
 * found by search on the other. The spans are folded whole by the same node, which answers every
 * node's trace queries and exports each span once; another node reads the spans' records only while
 * its live feed is watched; the span snapshot is shared, so the node taking over starts from it.
 */
import path from 'node:path';
import os from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { expect, it } from 'vitest';
import { usePgNodes } from '../helpers/pg-nodes.js';
import { api } from '../helpers/server.js';
import { killSpawned, spawnServer } from '../helpers/spawn-server.js';
import { until } from '../helpers/until.js';
import { startOtlpReceiver } from '../observability/helpers.js';

const LEASE_MS = 1500;
const { startNodes, db } = usePgNodes({ leaseMs: LEASE_MS });

const holder = async () => (await db().query<{ node_id: string }>(`SELECT node_id FROM el_owners WHERE stream = 'lease:read-models'`)).rows[0]?.node_id;
const listed = async (url: string) => {
  const r = await api(`${url}/workflows/executions?workflowId=echo&limit=100`);
  expect(r.status).toBe(200);
  return { ids: (r.body.data as Array<{ id: string }>).map((e) => e.id), total: r.body.total as number };
};
const execute = async (url: string, text: string) => {
  const r = await api(`${url}/workflows/echo/execute`, { method: 'POST', json: { input: { text } } });
  expect(r.body.data.status).toBe('completed');
  return r.body.data.executionId as string;
};

it('keeps serving listings after the node folding them is killed, and serves them at once on a node that joins later', async () => {
  const nodes = await startNodes(2);
  const ids = [await execute(nodes[0].url, 'a'), await execute(nodes[1].url, 'b')];
  const folding = await holder();
  const dead = nodes.find((n) => n.id === folding)!;
  const survivor = nodes.find((n) => n !== dead)!;
  expect(dead).toBeDefined();
  const role = async (n: { url: string }) => (await api(`${n.url}/observability/status`, { headers: { 'x-service-dev': 'true' } })).body.data.node.sharedReadModels;
  expect([await role(dead), await role(survivor)]).toEqual(['folds', 'reads']);
  expect((await listed(survivor.url)).ids).toEqual(expect.arrayContaining(ids));

  await killSpawned(dead);
  const after = await execute(survivor.url, 'after the kill');
  const start = Date.now();
  // the survivor's listing waits until it holds the lease and has folded what came after the kill
  const list = await listed(survivor.url);
  expect(list.ids).toEqual(expect.arrayContaining([...ids, after]));
  expect(list.total).toBe(3);
  expect(Date.now() - start).toBeLessThanOrEqual(LEASE_MS + LEASE_MS / 3 + 2000);
  expect(await holder()).toBe(survivor.id);
  expect(await role(survivor)).toBe('folds');

  // a node joining under a new id reads the same rows: nothing to fold first
  const url = (db() as unknown as { options: { connectionString: string } }).options.connectionString;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-joiner-'));
  const joiner = await spawnServer(['--port', '0', '--data', dir, '--database-url', url, '--node-id', 'joiner', '--lease-ms', String(LEASE_MS)], {}, 60_000);
  try {
    const seen = await listed(joiner.url);
    expect(seen.total).toBe(3);
    expect(seen.ids.sort()).toEqual([...ids, after].sort());
    expect(await holder()).toBe(survivor.id);
    expect(await role(joiner)).toBe('reads');
  } finally {
    await killSpawned(joiner);
    rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);

it('exports each span once to the OTLP collector, from the node folding the spans, whichever node ran it', async () => {
  const receiver = await startOtlpReceiver();
  try {
    const nodes = await startNodes(2, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
    const ids = [await execute(nodes[0].url, 'on a'), await execute(nodes[1].url, 'on b'), await execute(nodes[0].url, 'on a again')];
    const exported = () =>
      receiver.requests.flatMap((r) => JSON.parse(r.body.toString()).resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans))) as Array<{
        spanId: string;
        name: string;
        attributes: Array<{ key: string; value: { stringValue?: string } }>;
      }>;
    // the exporters batch for up to a second: both executions' two spans arrive, and nothing more
    await until(() => exported().length >= 2 * ids.length, 'the spans of every execution to be exported', 20_000);
    await new Promise((r) => setTimeout(r, 1500));
    const spans = exported();
    expect(spans).toHaveLength(2 * ids.length);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
    const roots = spans.filter((s) => s.name === 'workflow:Echo').map((s) => s.attributes.find((a) => a.key === 'workflow.execution.id')?.value.stringValue);
    expect(roots.sort()).toEqual([...ids].sort());
  } finally {
    await receiver.close();
  }
}, 60_000);

it('folds every span on one node: another node keeps none of its spans, reads fewer of its records, and answers trace queries from it', async () => {
  const nodes = await startNodes(2);
  const folding = await holder();
  const [folder, reader] = nodes[0].id === folding ? nodes : [nodes[1], nodes[0]];
  const status = async (n: { url: string }) => (await api(`${n.url}/observability/status`, { headers: { 'x-service-dev': 'true' } })).body.data;
  const ids = [await execute(folder.url, 'one'), await execute(folder.url, 'two'), await execute(folder.url, 'three')];
  const head = (await status(folder)).eventLog.head as number;

  const seen = await status(reader);
  expect(seen.node.sharedReadModels).toBe('reads');
  expect(seen.spanCount).toBe(0);
  // of the folding node's records it read only those its own read models need (the live runs, the event waits)
  expect(seen.eventLog.otherNodesRecords.records).toBeLessThan(head);
  expect((await status(folder)).spanCount).toBeGreaterThanOrEqual(2 * ids.length);

  const r = await api(`${reader.url}/observability/traces?entityType=workflow&entityId=echo`, { headers: { 'x-service-dev': 'true' } });
  expect(r.status).toBe(200);
  const traces = r.body.data.traces as Array<{ traceId: string; spans: Array<{ spanId: string; attributes: Record<string, unknown> }> }>;
  expect(traces.map((t) => t.spans.find((s) => s.attributes['workflow.execution.id'])?.attributes['workflow.execution.id']).sort()).toEqual([...ids].sort());
  const one = await api(`${reader.url}/observability/traces/${traces[0].traceId}`, { headers: { 'x-service-dev': 'true' } });
  expect(one.body.data.spans).toEqual(traces[0].spans);
  const span = await api(`${reader.url}/observability/spans/${traces[0].spans[0].spanId}`, { headers: { 'x-service-dev': 'true' } });
  expect(span.body.data.spanId).toBe(traces[0].spans[0].spanId);
  expect((await api(`${reader.url}/observability/traces/0123456789abcdef0123456789abcdef`, { headers: { 'x-service-dev': 'true' } })).status).toBe(404);

  // its own runs' spans it does fold (they link its log lines), and the folding node has them too
  const mine = await execute(reader.url, 'on the reader');
  expect((await status(reader)).spanCount).toBe(2);
  const listed = await api(`${reader.url}/observability/traces?entityType=workflow&entityId=echo`, { headers: { 'x-service-dev': 'true' } });
  expect(listed.body.data.count).toBe(4);
  expect(JSON.stringify(listed.body.data.traces)).toContain(mine);
}, 90_000);

it('starts the spans of the node taking the read models over from the snapshot its predecessor saved, not from the log', async () => {
  // these nodes fold none of the log's tail into their spans when they start them: what they show comes from a snapshot
  const config = path.resolve(import.meta.dirname, '..', 'fixtures', 'no-replay.config.ts');
  const nodes = await startNodes(2, { config });
  const ids = [await execute(nodes[0].url, 'one'), await execute(nodes[1].url, 'two')];
  const folding = await holder();
  const folder = nodes.find((n) => n.id === folding)!;
  const survivor = nodes.find((n) => n !== folder)!;
  // a graceful stop saves the spans while the node still folds the shared read models
  folder.child.kill('SIGTERM');
  expect(await folder.exited).toBe(0);

  const traced = async () => {
    const r = await api(`${survivor.url}/observability/traces?entityType=workflow&entityId=echo`, { headers: { 'x-service-dev': 'true' } });
    if (r.status !== 200) return undefined;
    return (r.body.data.traces as Array<{ spans: Array<{ attributes: Record<string, unknown> }> }>).map(
      (t) => t.spans.find((s) => s.attributes['workflow.execution.id'] !== undefined)?.attributes['workflow.execution.id'],
    );
  };
  // until the survivor holds the lease, its trace queries go to no node (503)
  await until(async () => (await holder()) === survivor.id, 'the survivor to take the read models over', 10_000);
  await until(async () => (await traced())?.length === 2, 'the survivor to show the traces of both executions', 10_000);
  expect((await traced())!.sort()).toEqual([...ids].sort());
  const after = await execute(survivor.url, 'after the handover');
  expect((await traced())!.sort()).toEqual([...ids, after].sort());
}, 90_000);

it('shares memory: what one node saves, another lists and finds at once, also after the node folding it is killed', async () => {
  const nodes = await startNodes(2);
  const folding = await holder();
  const [folder, reader] = nodes[0].id === folding ? nodes : [nodes[1], nodes[0]];
  const memory = (n: { url: string }, path: string, json?: unknown) => api(`${n.url}/api/memory${path}`, json === undefined ? {} : { method: 'POST', json });
  const messages = async (n: { url: string }, cid: string) => {
    const r = await memory(n, `/conversations/${cid}/messages?userId=pat`);
    expect(r.status).toBe(200);
    return (r.body.data.messages as Array<{ id: string }>).map((m) => m.id);
  };
  const found = async (n: { url: string }, query: string) => {
    const r = await memory(n, `/search?searchQuery=${encodeURIComponent(query)}&userId=pat&threshold=0.5`);
    expect(r.status).toBe(200);
    return (r.body.data.results as Array<{ id: string }>).map((m) => m.id);
  };

  // written on the node that only reads the shared rows: the write waits for the other node's fold
  const created = await memory(reader, '/conversations', { conversationId: 'c1', userId: 'pat', resourceId: 'res' });
  expect(created.status).toBe(201);
  const saved = await memory(reader, '/save-messages', { userId: 'pat', conversationId: 'c1', messages: [{ id: 'm1', role: 'user', content: 'the mango is ripe' }] });
  expect(saved.body).toMatchObject({ success: true, data: { saved: 1 } });
  expect(await messages(folder, 'c1')).toEqual(['m1']);
  expect(await found(folder, 'ripe mango')).toEqual(['m1']);
  // written on the folding node: the reader's own index learns it from the record
  await memory(folder, '/save-messages', { userId: 'pat', conversationId: 'c1', messages: [{ id: 'm2', role: 'user', content: 'a kiwi for later' }] });
  expect(await messages(reader, 'c1')).toEqual(['m1', 'm2']);
  expect(await found(reader, 'kiwi')).toEqual(['m2']);

  await killSpawned(folder);
  await memory(reader, '/save-messages', { userId: 'pat', conversationId: 'c1', messages: [{ id: 'm3', role: 'user', content: 'papaya after the kill' }] });
  expect(await messages(reader, 'c1')).toEqual(['m1', 'm2', 'm3']);
  expect(await found(reader, 'papaya')).toEqual(['m3']);
  expect(await holder()).toBe(reader.id);
  // the messages' rows are the shared ones, not a copy per node
  const rows = await db().query<{ scope: string; n: string }>(`SELECT scope, count(*) AS n FROM el_kv WHERE key >= convert_to('mem:m', 'UTF8') AND key < convert_to('mem:n', 'UTF8') GROUP BY scope`);
  expect(rows.rows.map((r) => [r.scope, Number(r.n)])).toEqual([['*', 3]]);
}, 90_000);
