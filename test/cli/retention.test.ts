/**
 * Retention end to end: a real server with a `retention` section removes the terminal executions its
 * policy lets go on its own schedule (a suspended one stays), a removed id answers 404 naming its
 * removal, the archive goes back into a data directory with `eventloom import`, and
 * `eventloom retention --dry-run` lists what a tighter policy would remove (executions and agent
 * runs) without removing it.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLevelLog } from '../../src/log/level/level-log.js';
import { echoWorkflow, orderApprovalWorkflow } from '../../examples/workflows/index.js';
import { retentionAssistant } from '../fixtures/retention.config.js';
import { runCli } from '../helpers/run-cli.js';
import { api, startTestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const FIXTURE = path.resolve(import.meta.dirname, '..', 'fixtures', 'retention.config.ts');

describe('retention', () => {
  it('removes what the policy lets go on a running server, answers 404 naming the removal, and the archive imports back', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'eventloom-retention-e2e-'));
    const archive = path.join(tmp, 'archive');
    try {
      const t = await startTestServer({ workflows: [echoWorkflow, orderApprovalWorkflow], retention: { archive, keepNewest: 1, every: '300ms' } }, { dataDir: path.join(tmp, 'data') });
      const ids: string[] = [];
      for (const text of ['a', 'b', 'c']) ids.push((await api(`${t.url}/workflows/echo/execute`, { method: 'POST', json: { input: { text } } })).body.data.executionId);
      const suspended = (await api(`${t.url}/workflows/order-approval/execute`, { method: 'POST', json: { input: { items: [{ price: 101, qty: 1 }] } } })).body.data;
      expect(suspended.status).toBe('suspended');
      await until(async () => (await api(`${t.url}/workflows/executions?workflowId=echo`)).body.total === 1, 'the pass to remove two echo executions', 20_000);
      const gone = await api(`${t.url}/workflows/echo/executions/${ids[0]}/state`);
      expect(gone.status).toBe(404);
      expect(gone.body.error).toMatch(new RegExp(`^Execution ${ids[0]} not found \\(removed by retention at \\d{4}-\\d\\d-\\d\\dT`));
      expect((await api(`${t.url}/workflows/echo/executions/${ids[2]}/state`)).status).toBe(200);
      expect((await api(`${t.url}/workflows/order-approval/executions/${suspended.executionId}/state`)).body.data.status).toBe('suspended');
      const attach = await api(`${t.url}/workflows/echo/executions/${ids[1]}/stream`);
      expect(attach.status).toBe(404);
      expect(attach.body.error).toContain('removed by retention at');
      await t.close();

      const files = readdirSync(archive).map((f) => path.join(archive, f));
      expect(files.length).toBeGreaterThan(0);
      const restored = path.join(tmp, 'restored');
      const imported = await runCli(['import', ...files, '--data', restored], { timeoutMs: 60_000 });
      expect(imported.stderr).toContain('imported 2 stream(s)');
      expect(imported.code).toBe(0);
      const log = await openLevelLog(path.join(restored, 'log'));
      expect((await log.readStream(`exec:${ids[0]}`)).map((r) => r.type)).toContain('execution.completed');
      expect(await log.streamHead(`exec:${ids[1]}`)).toBeGreaterThan(0);
      await log.close();
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('lists with --dry-run what a pass would remove (executions and agent runs) and removes nothing; without it, removes them', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'eventloom-retention-cli-'));
    try {
      const dataDir = path.join(tmp, 'data');
      const t = await startTestServer({ workflows: [echoWorkflow, orderApprovalWorkflow], agents: [retentionAssistant] }, { dataDir });
      const ids: string[] = [];
      for (const text of ['a', 'b']) ids.push((await api(`${t.url}/workflows/echo/execute`, { method: 'POST', json: { input: { text } } })).body.data.executionId);
      const runIds: string[] = [];
      for (const input of ['one', 'two']) {
        await api(`${t.url}/agents/assistant/text`, { method: 'POST', json: { input } });
        runIds.push((await api(`${t.url}/agents/assistant/history?limit=1`)).body.data.entries[0].id);
      }
      await t.close();
      const env = { RETENTION_KEEP_NEWEST: '0', RETENTION_ARCHIVE: path.join(tmp, 'archive') };
      const dry = await runCli(['retention', '--data', dataDir, '--config', FIXTURE, '--dry-run'], { env, timeoutMs: 60_000 });
      expect(dry.stderr).toBe('');
      expect(dry.code).toBe(0);
      for (const id of ids) expect(dry.stdout).toContain(`${id}\techo\tcompleted`);
      for (const id of runIds) expect(dry.stdout).toContain(`run:${id}\tagent assistant\tcompleted`);
      expect(dry.stdout).toContain('2 execution(s) and 2 agent run(s) would be removed and archived to');
      let log = await openLevelLog(path.join(dataDir, 'log'));
      expect(await log.streamHead(`exec:${ids[0]}`)).toBeGreaterThan(0);
      expect(await log.streamHead(`run:${runIds[0]}`)).toBeGreaterThan(0);
      await log.close();
      const real = await runCli(['retention', '--data', dataDir, '--config', FIXTURE], { env, timeoutMs: 60_000 });
      expect(real.code).toBe(0);
      expect(real.stdout).toContain('2 execution(s) and 2 agent run(s) removed');
      log = await openLevelLog(path.join(dataDir, 'log'));
      expect(await log.streamHead(`exec:${ids[0]}`)).toBe(0);
      for (const id of runIds) expect(await log.streamHead(`run:${id}`)).toBe(0);
      expect((await log.integrity!.check()).problems).toEqual([]);
      await log.close();
      const bad = await runCli(['retention', '--data', dataDir, '--config', FIXTURE], { env: { RETENTION_KEEP_NEWEST: '-1' }, timeoutMs: 60_000 });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('config.retention.workflows.echo.keepNewest: a count of executions');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    // four CLI processes one after the other, each starting through tsx
  }, 120_000);
});
