/**
 * Retention of agent runs on a real server with the offline demo model: an agent's own policy
 * removes its older terminal runs on the server's schedule (a run paused for a tool approval stays,
 * an agent without a policy keeps all its runs), the history lists what remains with counts to
 * match, a removed run answers 404 naming its removal (the run route and the approval route), the
 * status shows the policy and the size of the history, and the archive imports back.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { createAgent } from '../../src/agents/define-agent.js';
import { openLevelLog } from '../../src/log/level/level-log.js';
import { supportAgent } from '../fixtures/tool-approvals.config.js';
import { runCli } from '../helpers/run-cli.js';
import { api, startTestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const assistant = createAgent({ id: 'assistant', name: 'Assistant', instructions: 'Be brief.' });
const DEV = { headers: { 'x-service-dev': 'true' } };

it('removes the runs an agent policy lets go, keeps paused runs and other agents, answers 404 naming the removal, and the archive imports back', async () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'eventloom-agent-retention-'));
  const archive = path.join(tmp, 'archive');
  try {
    const t = await startTestServer({ agents: [supportAgent, assistant], retention: { archive, every: '300ms', agents: { support: { keepNewest: 1 } } } }, { dataDir: path.join(tmp, 'data') });
    const text = async (agent: string, input: string) => (await api(`${t.url}/agents/${agent}/text`, { method: 'POST', json: { input } })).body.data;
    const completed: string[] = [];
    for (const input of ['hello one', 'hello two', 'hello three']) {
      await text('support', input);
      completed.push((await api(`${t.url}/agents/support/history?limit=1`)).body.data.entries[0].id);
    }
    const paused = await text('support', 'refund orderId A1 amount 30');
    expect(paused.status).toBe('awaiting-approval');
    for (const input of ['hi one', 'hi two']) await text('assistant', input);

    await until(async () => (await api(`${t.url}/agents/support/history`)).body.data.pagination.total === 2, 'the passes to remove two support runs', 20_000);
    const history = (await api(`${t.url}/agents/support/history`)).body.data;
    expect(history.entries.map((e: { id: string }) => e.id)).toEqual([paused.runId, completed[2]]);
    expect((await api(`${t.url}/agents/assistant/history`)).body.data.pagination.total).toBe(2);

    for (const runId of completed.slice(0, 2)) {
      const gone = await api(`${t.url}/agents/support/runs/${runId}`);
      expect(gone.status).toBe(404);
      expect(gone.body.error).toMatch(new RegExp(`^Agent run ${runId} not found \\(removed by retention at \\d{4}-\\d\\d-\\d\\dT`));
      expect(await t.server.log.streamHead(`run:${runId}`)).toBe(0);
    }
    const approveGone = await api(`${t.url}/agents/support/runs/${completed[0]}/approvals/x`, { method: 'POST', json: { approved: true } });
    expect(approveGone.status).toBe(404);
    expect(approveGone.body.error).toContain('removed by retention at');
    expect((await api(`${t.url}/agents/support/runs/${completed[2]}`)).body.data).toMatchObject({ id: completed[2], status: 'completed' });
    expect((await api(`${t.url}/agents/support/runs/${paused.runId}`)).body.data).toMatchObject({ status: 'working', metadata: { pendingApprovals: [{ toolName: 'refund' }] } });
    expect((await api(`${t.url}/agents/support/runs/never-was`)).body.error).toBe('Agent run never-was not found');

    // the status: the policy in effect per agent, and the size of the history
    const status = (await api(`${t.url}/observability/status`, DEV)).body.data;
    expect(status.history).toMatchObject({
      agentRuns: 4,
      agentRunsPerAgent: { support: 2, assistant: 2 },
      executions: 0,
      removedRecords: expect.any(Number),
      storedBytes: expect.any(Number),
      retention: {
        archive,
        everyMs: 300,
        agents: { support: { own: true, keepsAll: false, keepNewest: 1 }, assistant: { own: false, keepsAll: true } },
        lastPass: { at: expect.stringMatching(/^\d{4}-/) },
      },
    });
    expect(status.history.removedRecords).toBeGreaterThanOrEqual(4);
    expect(status.history.records).toBe(status.history.head - status.history.removedRecords);
    expect(status.history.retention.lastPass.error).toBeUndefined();
    await t.close();

    const files = readdirSync(archive).map((f) => path.join(archive, f));
    const restored = path.join(tmp, 'restored');
    const imported = await runCli(['import', ...files, '--data', restored], { timeoutMs: 60_000 });
    expect(imported.code, imported.stderr).toBe(0);
    const log = await openLevelLog(path.join(restored, 'log'));
    try {
      for (const runId of completed.slice(0, 2)) expect((await log.readStream(`run:${runId}`)).map((r) => r.type)).toEqual(['run.started', 'run.finished']);
    } finally {
      await log.close();
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}, 90_000);
