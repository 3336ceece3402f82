/**
 * Tool approvals over `/chat`, driven by the `ai` SDK's own chat client (AbstractChat, what
 * `useChat` wraps, over DefaultChatTransport): the stream carries the approval request, the client's
 * `addToolApprovalResponse` answers it, and the request the client then sends continues the same
 * run, which runs the approved tool and completes; also when the server was killed with SIGKILL and
 * restarted between the request and the answer (the pause is a record, not process memory).
 */
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UIMessage } from 'ai';
import { supportAgent } from '../fixtures/tool-approvals.config.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { until } from '../helpers/until.js';
import { MemoryState, TestChat } from '../helpers/chat-client.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-approvals-chat-'));
const refundLog = path.join(dir, 'refunds.txt');
const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'tool-approvals.config.ts');
let t: TestServer;
let child: SpawnedServer | undefined;

beforeAll(async () => {
  process.env.REFUND_LOG = refundLog;
  t = await startTestServer({ agents: [supportAgent] });
});
afterAll(async () => {
  await t?.close();
  await killSpawned(child);
  delete process.env.REFUND_LOG;
  rmSync(dir, { recursive: true, force: true });
});

type ToolPart = { type: string; state: string; approval?: { id: string }; output?: unknown };
const refundPart = (m: UIMessage | undefined) => m?.parts.find((p) => p.type === 'tool-refund') as ToolPart | undefined;

describe('tool approvals over /chat', () => {
  it('streams the approval request that addToolApprovalResponse answers, and the next request continues the run to completion', async () => {
    const state = new MemoryState();
    const chat = new TestChat(state, `${t.url}/agents/support/chat`);
    await chat.sendMessage({ text: 'refund orderId Z9 amount 12' });
    const asked = refundPart(state.messages.at(-1));
    expect(asked).toMatchObject({ state: 'approval-requested', approval: { id: expect.any(String) } });
    const runId = (state.messages.at(-1)!.metadata as { runId: string }).runId;
    expect(typeof runId).toBe('string');
    expect(existsSync(refundLog)).toBe(false);
    const waiting = (await api(`${t.url}/agents/support/history`)).body.data.entries[0];
    expect(waiting).toMatchObject({ id: runId, status: 'working', metadata: { pendingApprovals: [{ approvalId: asked!.approval!.id, toolName: 'refund' }] } });

    await chat.addToolApprovalResponse({ id: asked!.approval!.id, approved: true });
    // the chat sends the answer on its own (sendAutomaticallyWhen) and streams the continuation
    await until(() => refundPart(state.messages.at(-1))?.state === 'output-available' && chat.status === 'ready', 'the continued run', 15_000);
    expect(refundPart(state.messages.at(-1))!.output).toEqual({ orderId: 'Z9', amount: 12, refunded: true });
    expect(readFileSync(refundLog, 'utf8')).toBe('Z9 12\n');

    // the same run continued and completed: one history entry, no second run
    const entries = (await api(`${t.url}/agents/support/history`)).body.data.entries;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ id: runId, status: 'completed' });
    const types = (await t.server.log.readStream(`run:${runId}`)).map((r) => r.type);
    expect(types).toContain('run.approval-requested');
    expect(types).toContain('run.approval-answered');
    expect(types.at(-1)).toBe('run.finished');
  }, 30_000);

  it('continues the run when the answer comes after the server was killed with SIGKILL and restarted', async () => {
    const killedLog = path.join(dir, 'refunds-after-kill.txt');
    const dataDir = path.join(dir, 'killed-data');
    const start = () => spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG], { REFUND_LOG: killedLog });
    child = await start();
    const state = new MemoryState();
    await new TestChat(state, `${child.url}/agents/support/chat`).sendMessage({ text: 'refund orderId K7 amount 5' });
    const asked = refundPart(state.messages.at(-1));
    expect(asked).toMatchObject({ state: 'approval-requested', approval: { id: expect.any(String) } });
    const runId = (state.messages.at(-1)!.metadata as { runId: string }).runId;

    child.child.kill('SIGKILL');
    expect(await child.exited).toBe('SIGKILL');
    child = await start();

    // the same page, its chat now talking to the restarted server
    const chat = new TestChat(state, `${child.url}/agents/support/chat`);
    await chat.addToolApprovalResponse({ id: asked!.approval!.id, approved: true });
    await until(() => refundPart(state.messages.at(-1))?.state === 'output-available' && chat.status === 'ready', 'the continued run after the restart', 20_000);
    expect(refundPart(state.messages.at(-1))!.output).toEqual({ orderId: 'K7', amount: 5, refunded: true });
    expect(readFileSync(killedLog, 'utf8')).toBe('K7 5\n');
    const entries = (await api(`${child.url}/agents/support/history`)).body.data.entries;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ id: runId, status: 'completed' });
  }, 60_000);
});
