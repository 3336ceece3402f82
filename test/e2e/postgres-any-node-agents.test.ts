/**
 * Tool approvals and A2A tasks on any node: two real server processes share one PostgreSQL store.
 * A run paused for a tool approval on one node is answered on the other (also after the first node
 * was killed with SIGKILL), the tool runs exactly once and both nodes' history shows the run
 * completed; two nodes answering the same approval at once run the tool once; a run waiting for two
 * approvals, the first answered on one node, is continued by a `/chat` sent to the other; an A2A task
 * sent to one node is read back and subscribed to, completed and with the same answer, on the other.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { Role, TaskState, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/server.js';
import type { SpawnedServer } from '../helpers/spawn-server.js';
import { usePgNodes } from '../helpers/pg-nodes.js';
import { until } from '../helpers/until.js';
import { MemoryState, TestChat } from '../helpers/chat-client.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'tool-approvals.config.ts');
const PAIR_CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'paired-approvals.config.ts');
const pgNodes = usePgNodes({ config: CONFIG });
let refundLog = '';

/** Two nodes on a fresh database, each with its own data dir; both write tool calls to one file. */
function startNodes(): Promise<SpawnedServer[]> {
  refundLog = pgNodes.freshPath('refunds.txt');
  return pgNodes.startNodes(2, { env: { REFUND_LOG: refundLog } });
}

const refunds = () => (existsSync(refundLog) ? readFileSync(refundLog, 'utf8') : '');

interface HistoryEntry {
  id: string;
  status: string;
}
const historyEntry = async (node: SpawnedServer, runId: string, agentId = 'support'): Promise<HistoryEntry | undefined> =>
  ((await api(`${node.url}/agents/${agentId}/history`)).body.data.entries as HistoryEntry[]).find((e) => e.id === runId);

/** Asks `node` for a refund and returns the paused run with its one pending approval. */
async function askForRefund(node: SpawnedServer, orderId: string): Promise<{ runId: string; approvalId: string }> {
  const asked = await api(`${node.url}/agents/support/text`, { method: 'POST', json: { input: `refund orderId ${orderId} amount 30` } });
  expect(asked.status).toBe(200);
  expect(asked.body.data).toMatchObject({ status: 'awaiting-approval', pendingApprovals: [{ toolName: 'refund', args: { orderId, amount: 30 } }] });
  return { runId: asked.body.data.runId, approvalId: asked.body.data.pendingApprovals[0].approvalId };
}

/** Approves on `node` and checks the tool ran once with the answer the run gives. */
async function approveOn(node: SpawnedServer, runId: string, approvalId: string, orderId: string): Promise<void> {
  const approved = await api(`${node.url}/agents/support/runs/${runId}/approvals/${approvalId}`, { method: 'POST', json: { approved: true } });
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  expect(approved.body.data).toMatchObject({ finishReason: 'stop', toolResults: [{ type: 'tool-result', toolName: 'refund', output: { orderId, amount: 30, refunded: true } }] });
  expect(refunds()).toBe(`${orderId} 30\n`);
}

const client = (node: SpawnedServer): Promise<Client> => new ClientFactory().createFromUrl(node.url, '/.well-known/support/agent-card.json');

function userMessage(text: string): Message {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const textOf = (parts: Part[] | undefined): string => (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

describe('agents on any node of a PostgreSQL cluster', () => {
  it('runs a tool once when its approval, asked on one node, is answered on the other, and both nodes show the run completed', async () => {
    const [a, b] = await startNodes();
    const { runId, approvalId } = await askForRefund(a, 'N1');
    expect(refunds()).toBe('');
    // the other node sees the pending approval in the shared history
    expect(await until(() => historyEntry(b, runId), 'the run in the other node history', 10_000)).toMatchObject({ status: 'working' });

    await approveOn(b, runId, approvalId, 'N1');
    for (const node of [a, b]) {
      await until(async () => (await historyEntry(node, runId))?.status === 'completed', `the run completed in ${node.url} history`, 10_000);
    }
    // answering again, on either node, is refused and runs nothing
    for (const node of [a, b]) {
      const again = await api(`${node.url}/agents/support/runs/${runId}/approvals/${approvalId}`, { method: 'POST', json: { approved: true } });
      expect(again.status).toBe(409);
    }
    expect(refunds()).toBe('N1 30\n');
  }, 40_000);

  it('answers on the surviving node an approval asked on a node killed with SIGKILL, and the tool runs once', async () => {
    const [a, b] = await startNodes();
    const { runId, approvalId } = await askForRefund(a, 'K1');
    a.child.kill('SIGKILL');
    expect(await a.exited).toBe('SIGKILL');

    await approveOn(b, runId, approvalId, 'K1');
    expect(await historyEntry(b, runId)).toMatchObject({ status: 'completed' });
    const again = await api(`${b.url}/agents/support/runs/${runId}/approvals/${approvalId}`, { method: 'POST', json: { approved: true } });
    expect(again.status).toBe(409);
    expect(refunds()).toBe('K1 30\n');
  }, 40_000);

  it('runs a tool once when the same approval is answered on both nodes at the same moment: one answer wins, the other is a conflict', async () => {
    const [a, b] = await startNodes();
    for (const orderId of ['C1', 'C2', 'C3']) {
      const { runId, approvalId } = await askForRefund(a, orderId);
      const answer = (node: SpawnedServer) => api(`${node.url}/agents/support/runs/${runId}/approvals/${approvalId}`, { method: 'POST', json: { approved: true } });
      const answers = await Promise.all([answer(a), answer(b)]);
      expect(answers.map((r) => r.status).sort(), JSON.stringify(answers.map((r) => r.body))).toEqual([200, 409]);
      expect(
        refunds()
          .split('\n')
          .filter((line) => line.startsWith(`${orderId} `)),
      ).toEqual([`${orderId} 30`]);
      expect(await historyEntry(b, runId)).toMatchObject({ status: 'completed' });
    }
  }, 40_000);

  it('continues through /chat on one node a run waiting for two approvals whose first was answered on the other node', async () => {
    refundLog = pgNodes.freshPath('refunds.txt');
    const [a, b] = await pgNodes.startNodes(2, { config: PAIR_CONFIG, env: { REFUND_LOG: refundLog } });
    const state = new MemoryState();
    await new TestChat(state, `${a.url}/agents/pair/chat`).sendMessage({ text: 'refund both orders' });
    const asked = state.messages.at(-1)!;
    type ToolPart = { type: string; state: string; approval?: { id: string } };
    const [first, second] = asked.parts.filter((p) => p.type === 'tool-refund') as ToolPart[];
    expect([first?.state, second?.state]).toEqual(['approval-requested', 'approval-requested']);
    const runId = (asked.metadata as { runId: string }).runId;

    // one decision through the approvals route on node a: the run still waits for the other
    const answered = await api(`${a.url}/agents/pair/runs/${runId}/approvals/${first.approval!.id}`, { method: 'POST', json: { approved: true } });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body.data).toMatchObject({ status: 'awaiting-approval', pendingApprovals: [{ approvalId: second.approval!.id }] });
    expect(refunds()).toBe('');

    // the page, which did not see that answer, gives both, and its request goes to node b
    const chat = new TestChat(state, `${b.url}/agents/pair/chat`);
    await chat.addToolApprovalResponse({ id: first.approval!.id, approved: true });
    await chat.addToolApprovalResponse({ id: second.approval!.id, approved: true });
    await until(() => chat.status === 'ready' || chat.status === 'error', 'the continued run', 30_000);
    expect(chat.error?.message).toBeUndefined();
    const said = state.messages
      .at(-1)!
      .parts.flatMap((p) => (p.type === 'text' ? [p.text] : []))
      .join('');
    expect(said).toContain('2 refunds decided');
    expect(refunds()).toBe('P1 10\nP2 20\n');
    for (const node of [a, b]) {
      await until(async () => (await historyEntry(node, runId, 'pair'))?.status === 'completed', `the run completed in ${node.url} history`, 10_000);
    }
  }, 60_000);

  it('reads and subscribes on one node to an A2A task sent to the other: completed, with the same answer', async () => {
    const [a, b] = await startNodes();
    const sent = await (await client(a)).sendMessage({ tenant: '', message: userMessage('hello from node a'), configuration: undefined, metadata: undefined });
    expect('status' in sent, 'the agent answers with a task').toBe(true);
    const task = sent as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const answer = textOf(task.artifacts[0]?.parts);
    expect(answer.length).toBeGreaterThan(0);

    const read = await (await client(b)).getTask({ tenant: '', id: task.id, historyLength: 10 });
    expect(read.id).toBe(task.id);
    expect(read.contextId).toBe(task.contextId);
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(read.artifacts[0]?.parts)).toBe(answer);
    expect(read.history.map((m) => [m.role, textOf(m.parts)])).toEqual([
      [Role.ROLE_USER, 'hello from node a'],
      [Role.ROLE_AGENT, answer],
    ]);
    // subscribing on the other node to the finished task gives the task as it ended
    const events: StreamResponse[] = [];
    for await (const e of (await client(b)).resubscribeTask({ tenant: '', id: task.id })) events.push(e);
    expect(events.map((e) => e.payload?.$case)).toEqual(['task']);
    const subscribed = events[0].payload!.value as Task;
    expect(subscribed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(subscribed.artifacts[0]?.parts)).toBe(answer);
  }, 40_000);
});
