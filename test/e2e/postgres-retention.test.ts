/**
 * Retention on two server processes sharing one PostgreSQL store: finished executions and agent runs
 * started on either node are archived once (one pass at a time, whichever node runs it: no record in
 * two archive files) and removed from the shared log; both nodes answer 404 naming the removal,
 * because each folds the `retention.removed` record into its own executions index and agent
 * history; a suspended execution stays.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { usePgNodes } from '../helpers/pg-nodes.js';
import { api } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'retention-nodes.config.ts');
const archiveRoot = mkdtempSync(path.join(os.tmpdir(), 'eventloom-pg-retention-'));
afterAll(() => rmSync(archiveRoot, { recursive: true, force: true }));

const { startNodes, records } = usePgNodes({ config: CONFIG, leaseMs: 1500, env: { RETENTION_ARCHIVE_ROOT: archiveRoot } });

/** Every archived record line of every node's archive files, with the file it is in. */
function archivedRecords(): Array<{ file: string; stream: string; streamSeq: number; type: string }> {
  const out: Array<{ file: string; stream: string; streamSeq: number; type: string }> = [];
  for (const node of readdirSync(archiveRoot)) {
    for (const f of readdirSync(path.join(archiveRoot, node))) {
      const file = path.join(node, f);
      const lines = readFileSync(path.join(archiveRoot, file), 'utf8').split('\n').filter(Boolean);
      // the first line is the history header
      for (const line of lines.slice(1)) {
        const r = JSON.parse(line) as { stream: string; streamSeq: number; type: string };
        out.push({ file, stream: r.stream, streamSeq: r.streamSeq, type: r.type });
      }
    }
  }
  return out;
}

it('archives finished executions and agent runs of both nodes once, removes them, and both nodes answer 404 naming the removal', async () => {
  const [a, b] = await startNodes();
  // enough executions, ending at about the same time on both nodes, for two unguarded passes to overlap
  const started = await Promise.all(Array.from({ length: 40 }, (_, i) => api(`${(i % 2 ? b : a).url}/workflows/echo/execute`, { method: 'POST', json: { input: { text: `t${i}` } } })));
  const ids = started.map((r) => {
    expect(r.body.data.status).toBe('completed');
    return r.body.data.executionId as string;
  });
  // agent runs on both nodes, one after the other so each node's newest history entry is the run it just ran
  const runIds: string[] = [];
  for (let i = 0; i < 6; i++) {
    const node = i % 2 ? b : a;
    expect((await api(`${node.url}/agents/assistant/text`, { method: 'POST', json: { input: `r${i}` } })).status).toBe(200);
    runIds.push((await api(`${node.url}/agents/assistant/history?limit=1`)).body.data.entries[0].id);
  }
  const suspended = (await api(`${b.url}/workflows/order-approval/execute`, { method: 'POST', json: { input: { items: [{ price: 101, qty: 1 }] } } })).body.data;
  expect(suspended.status).toBe('suspended');
  for (const node of [a, b]) {
    await until(async () => (await api(`${node.url}/workflows/executions?workflowId=echo`)).body.total === 0, 'both nodes to drop the removed executions', 30_000);
    await until(async () => (await api(`${node.url}/agents/assistant/history`)).body.data.pagination.total === 0, 'both nodes to drop the removed agent runs', 30_000);
  }
  for (const runId of runIds) {
    await until(async () => (await records(`run:${runId}`)).length === 0, `the rows of run ${runId} to be deleted`, 30_000);
    for (const node of [a, b]) {
      const gone = await api(`${node.url}/agents/assistant/runs/${runId}`);
      expect(gone.status).toBe(404);
      expect(gone.body.error).toMatch(new RegExp(`^Agent run ${runId} not found \\(removed by retention at \\d{4}-\\d\\d-\\d\\dT`));
    }
  }
  for (const id of ids) {
    // a pass records the removal before it deletes the rows: the indexes drop a run first, its rows go after
    await until(async () => (await records(`exec:${id}`)).length === 0, `the rows of ${id} to be deleted`, 30_000);
    for (const node of [a, b]) {
      const gone = await api(`${node.url}/workflows/echo/executions/${id}/state`);
      expect(gone.status).toBe(404);
      expect(gone.body.error).toMatch(new RegExp(`^Execution ${id} not found \\(removed by retention at \\d{4}-\\d\\d-\\d\\dT`));
    }
  }
  for (const node of [a, b]) expect((await api(`${node.url}/workflows/order-approval/executions/${suspended.executionId}/state`)).body.data.status).toBe('suspended');
  // the status of a node: the history it keeps, the removed records counted by the shared store, the records table's size
  const status = (await api(`${a.url}/observability/status`, { headers: { 'x-service-dev': 'true' } })).body.data;
  expect(status.history).toMatchObject({ executions: 1, executionsPerWorkflow: { 'order-approval': 1 }, agentRuns: 0, storedBytes: expect.any(Number) });
  expect(status.history.storedBytes).toBeGreaterThan(0);
  expect(status.history.removedRecords).toBeGreaterThanOrEqual(ids.length * 2 + runIds.length * 2);
  expect(status.history.retention.agents.assistant).toEqual({ own: true, keepsAll: false, keepForMs: 1000 });

  const archived = archivedRecords();
  const keys = archived.map((r) => `${r.stream}#${r.streamSeq}`);
  expect(
    new Set(keys).size,
    `records archived twice: ${keys
      .filter((k, i) => keys.indexOf(k) !== i)
      .slice(0, 4)
      .join(', ')}`,
  ).toBe(keys.length);
  expect([...new Set(archived.map((r) => r.stream))].sort()).toEqual([...ids.map((id) => `exec:${id}`), ...runIds.map((id) => `run:${id}`)].sort());
  for (const runId of runIds) expect(archived.filter((r) => r.stream === `run:${runId}`).map((r) => r.type)).toEqual(['run.started', 'run.finished']);
  for (const id of ids) {
    const mine = archived.filter((r) => r.stream === `exec:${id}`);
    // the whole stream, in one file, ending in its completion
    expect(mine.map((r) => r.streamSeq)).toEqual(mine.map((_, i) => i + 1));
    expect(new Set(mine.map((r) => r.file)).size).toBe(1);
    expect(mine.at(-1)?.type).toBe('execution.completed');
  }
  // a removed id starts a new execution on the node that ran it, whichever node's pass removed it
  for (const [i, node] of [a, b].entries()) {
    const again = await api(`${node.url}/workflows/echo/execute`, { method: 'POST', json: { input: { text: 'again' }, options: { executionId: ids[i] } } });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.data).toMatchObject({ executionId: ids[i], status: 'completed' });
  }
}, 90_000);
