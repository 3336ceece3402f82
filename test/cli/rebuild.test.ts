/**
 * `eventloom rebuild --data <dir>` (a real child process) rebuilds the read models of a stopped
 * server's data directory from its log, and refuses a directory that is in use or not a log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLevelLog } from '../../src/log/level/level-log.js';
import { SPAN_SNAPSHOT_KEY } from '../../src/observability/span-snapshot.js';
import { echoWorkflow } from '../../examples/workflows/echo.workflow.js';
import { runCli } from '../helpers/run-cli.js';
import { api, startTestServer } from '../helpers/server.js';

describe('eventloom rebuild', () => {
  it('rebuilds the executions index of a stopped server from its log', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-rebuild-'));
    try {
      const t = await startTestServer({ workflows: [echoWorkflow] }, { dataDir });
      for (const text of ['a', 'b', 'c']) expect((await api(`${t.url}/workflows/echo/execute`, { method: 'POST', json: { input: { text } } })).status).toBe(200);
      const before = (await api(`${t.url}/workflows/executions`)).body;
      expect(before.total).toBe(3);
      await t.server.close();
      // damage the index: its rows gone, its checkpoint still at the head, so a start alone cannot mend it
      const log = await openLevelLog(path.join(dataDir, 'log'));
      for (const [k] of await log.kv.range({ gte: 'wfx/', lt: 'wfx0' })) await log.kv.del(k);
      await log.close();

      const run = await runCli(['rebuild', '--data', dataDir], { timeoutMs: 60_000 });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/executions index: \d+ ms/);

      const reopened = await openLevelLog(path.join(dataDir, 'log'));
      expect(await reopened.kv.get(SPAN_SNAPSHOT_KEY)).toBeUndefined();
      await reopened.close();
      await t.restart();
      expect((await api(`${t.url}/workflows/executions`)).body).toEqual(before);
      await t.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses a data directory a running server holds, one without a log, and a call without --data', async () => {
    const t = await startTestServer();
    try {
      const busy = await runCli(['rebuild', '--data', t.dataDir], { timeoutMs: 60_000 });
      expect(busy.code).toBe(2);
      expect(busy.stderr).toContain('in use by a running eventloom server');
      const empty = mkdtempSync(path.join(os.tmpdir(), 'eventloom-rebuild-empty-'));
      const none = await runCli(['rebuild', '--data', empty], { timeoutMs: 60_000 });
      rmSync(empty, { recursive: true, force: true });
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('holds no event log');
      const bare = await runCli(['rebuild'], { timeoutMs: 60_000 });
      expect(bare.code).toBe(2);
      expect(bare.stderr).toContain('--data <dir>');
    } finally {
      await t.close();
    }
  });
});
