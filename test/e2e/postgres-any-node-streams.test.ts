/**
 * Streamed answers on any node of a PostgreSQL cluster, with two real server processes: a workflow
 * stream asked of node B for an execution node A runs (the start repeated with its idempotency key,
 * and the attach route) carries the execution's events in order and the terminal `workflow-result`,
 * frame for frame what A's own stream carried; a chat that continues a run A paused is streamed by
 * B, which runs the approved tool once; and a chat continuing a run A still holds waits until A lets
 * it go, then moves the run to B and streams it there.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/server.js';
import type { SpawnedServer } from '../helpers/spawn-server.js';
import { usePgNodes } from '../helpers/pg-nodes.js';
import { collectSse, type SseFrame } from '../helpers/sse.js';
import { MemoryState, TestChat } from '../helpers/chat-client.js';
import { until } from '../helpers/until.js';

const APPROVALS = path.resolve(import.meta.dirname, '..', 'fixtures', 'tool-approvals.config.ts');
const { startNodes, records, db, freshPath } = usePgNodes();

const eventsOf = (frames: SseFrame[]) => frames.map((f) => [f.id, f.event, f.json?.type, f.json?.stepId ?? null]);

describe('workflow streams on any node', () => {
  it('streams on node B an execution node A runs, with its events in order and the terminal workflow-result, as A streams it', async () => {
    const [a, b] = await startNodes();
    const start = (node: SpawnedServer) =>
      collectSse(`${node.url}/workflows/echo/stream`, { method: 'POST', json: { input: { text: 'from a', delayMs: 1500 } }, headers: { 'idempotency-key': 'stream-any-node' } });
    const onA = start(a);
    const executionId = await until(
      async () => (await db().query<{ stream: string }>("SELECT stream FROM el_events WHERE stream LIKE 'exec:idem-%' LIMIT 1")).rows[0]?.stream,
      'the execution on A',
      15_000,
    );
    // A owns the running execution; B answers the same start (a repeat of the key) and an attach, from the log
    const owner = await db().query<{ node_id: string }>('SELECT node_id FROM el_owners WHERE stream = $1', [executionId]);
    expect(owner.rows[0]?.node_id).toBe(a.id);
    const id = executionId.slice('exec:'.length);
    const [repeatOnB, attachOnB, fromA] = await Promise.all([start(b), collectSse(`${b.url}/workflows/echo/executions/${id}/stream`), onA]);

    expect(fromA.status).toBe(200);
    expect(fromA.frames.at(-1)!.json).toMatchObject({ type: 'workflow-result', status: 'completed', executionId: id });
    const ids = fromA.frames.map((f) => Number(f.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    for (const onB of [repeatOnB, attachOnB]) {
      expect(onB.status).toBe(200);
      expect(onB.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(eventsOf(onB.frames)).toEqual(eventsOf(fromA.frames));
      expect(onB.frames.at(-1)!.json).toEqual(fromA.frames.at(-1)!.json);
    }
    expect(repeatOnB.headers.get('idempotent-replayed')).toBe('true');
  }, 60_000);
});

type ToolPart = { type: string; state: string; approval?: { id: string }; output?: unknown };
const refundPart = (m: UIMessage | undefined) => m?.parts.find((p) => p.type === 'tool-refund') as ToolPart | undefined;

describe('agent chats on any node', () => {
  /** Two nodes with the support agent; a chat on A that pauses its run for the refund's approval. */
  async function pausedOnA(orderId: string) {
    const refunds = freshPath('refunds.txt');
    const [a, b] = await startNodes(2, { config: APPROVALS, env: { REFUND_LOG: refunds } });
    const state = new MemoryState();
    await new TestChat(state, `${a.url}/agents/support/chat`).sendMessage({ text: `refund orderId ${orderId} amount 12` });
    const asked = refundPart(state.messages.at(-1));
    expect(asked).toMatchObject({ state: 'approval-requested', approval: { id: expect.any(String) } });
    const runId = (state.messages.at(-1)!.metadata as { runId: string }).runId;
    return { a, b, state, approvalId: asked!.approval!.id, runId, refunds: () => (existsSync(refunds) ? readFileSync(refunds, 'utf8') : '') };
  }

  /** The same page, now talking to B: its answer goes to B, which streams the continued run. */
  async function continueOn(node: SpawnedServer, state: MemoryState, approvalId: string) {
    const chat = new TestChat(state, `${node.url}/agents/support/chat`);
    await chat.addToolApprovalResponse({ id: approvalId, approved: true });
    return chat;
  }

  async function expectCompletedOnce(nodes: SpawnedServer[], runId: string, records: () => Promise<string[]>) {
    for (const node of nodes) {
      const entries = (await api(`${node.url}/agents/support/history`)).body.data.entries as Array<{ id: string; status: string }>;
      expect(entries.filter((e) => e.id === runId)).toEqual([expect.objectContaining({ status: 'completed' })]);
      expect(entries).toHaveLength(1);
    }
    const types = await records();
    expect(types.filter((t) => t === 'run.approval-answered')).toHaveLength(1);
    expect(types.at(-1)).toBe('run.finished');
  }

  const runTypes = async (runId: string) => (await records(`run:${runId}`)).map((r) => r.type);

  it('streams on node B the continuation of a chat run that node A paused for an approval, and the tool runs once', async () => {
    const { a, b, state, approvalId, runId, refunds } = await pausedOnA('B1');
    const chat = await continueOn(b, state, approvalId);
    await until(() => refundPart(state.messages.at(-1))?.state === 'output-available' && chat.status === 'ready', 'the run continued on B', 20_000);
    expect(chat.error).toBeUndefined();
    expect(refundPart(state.messages.at(-1))!.output).toEqual({ orderId: 'B1', amount: 12, refunded: true });
    expect(refunds()).toBe('B1 12\n');
    await until(async () => (await api(`${a.url}/agents/support/history`)).body.data.entries[0]?.status === 'completed', 'the run completed in A history', 10_000);
    await expectCompletedOnce([a, b], runId, () => runTypes(runId));
  }, 60_000);

  it('moves to node B a chat run that node A holds once A lets it go, and streams its continuation there', async () => {
    const { a, b, state, approvalId, runId, refunds } = await pausedOnA('M1');
    const stream = `run:${runId}`;
    // A holds the paused run, as a node does after recording a decision of it
    const held = await db().query(
      `INSERT INTO el_owners (stream, node_id, node_epoch, epoch) SELECT $1, node_id, epoch, 1 FROM el_nodes WHERE node_id = $2
       ON CONFLICT (stream) DO UPDATE SET node_id = EXCLUDED.node_id, node_epoch = EXCLUDED.node_epoch, epoch = el_owners.epoch + 1`,
      [stream, a.id],
    );
    expect(held.rowCount).toBe(1);
    const sentAt = Date.now();
    const chat = await continueOn(b, state, approvalId);
    // while A holds the run, B neither runs the tool nor writes to the run
    await new Promise((r) => setTimeout(r, 1500));
    expect(refunds()).toBe('');
    expect((await runTypes(runId)).at(-1)).toBe('run.approval-requested');
    // A lets it go: B claims it and streams the continued run
    await db().query('DELETE FROM el_owners WHERE stream = $1', [stream]);
    await until(() => refundPart(state.messages.at(-1))?.state === 'output-available' && chat.status === 'ready', 'the run moved to B', 20_000);
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(1500);
    expect(chat.error).toBeUndefined();
    expect(refundPart(state.messages.at(-1))!.output).toEqual({ orderId: 'M1', amount: 12, refunded: true });
    expect(refunds()).toBe('M1 12\n');
    await until(async () => (await api(`${a.url}/agents/support/history`)).body.data.entries[0]?.status === 'completed', 'the run completed in A history', 10_000);
    await expectCompletedOnce([a, b], runId, () => runTypes(runId));
  }, 60_000);
});
