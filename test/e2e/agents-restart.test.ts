/**
 * Agent runs across restarts of the real server (LevelDB data dir): a run that a crash left without
 * a terminal record is closed as failed at boot (its caller is gone, so it is not re-generated), and
 * finished history is unchanged by restarts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { createAgent } from '../../src/agents/define-agent.js';
import { createDemoModel } from '../../src/agents/models/demo-model.js';
import { readSse } from '../helpers/sse.js';
import { openLevelLog } from '../../src/log/level/level-log.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

const agent = createAgent({ id: 'echo', name: 'Echo', instructions: 'Echo.' });
let t: TestServer | undefined;
let t2: TestServer | undefined;
afterAll(async () => {
  await t?.close();
  await t2?.close();
});

describe('agent runs across restarts', () => {
  it('closes a run interrupted by a crash as failed at the next boot', async () => {
    t = await startTestServer({ agents: [agent] });
    await api(`${t.url}/agents/echo/text`, { method: 'POST', json: { input: 'before the crash' } });
    await t.server.close();
    // what a crash mid-generation leaves: a started run and nothing after it
    const log = await openLevelLog(path.join(t.dataDir, 'log'));
    await log.append(
      'run:interrupted-1',
      [{ type: 'run.started', kind: 'agent-run@1', data: { runId: 'interrupted-1', agentId: 'echo', operationType: 'stream', input: 'lost', options: {}, model: 'demo (offline)' } }],
      { expectedStreamSeq: 0 },
    );
    await log.close();
    t.server = await (
      await import('../../src/server-assembly.js')
    ).startDefaultServer({
      config: { agents: [agent] },
      port: 0,
      host: '127.0.0.1',
      dataDir: t.dataDir,
      env: { ...process.env, NODE_ENV: 'test' },
      logger: (await import('pino')).default({ level: 'silent' }),
    });
    const { body } = await api(`${t.url}/agents/echo/history`);
    expect(body.data.pagination.total).toBe(2);
    expect(body.data.entries[0]).toMatchObject({
      id: 'interrupted-1',
      operationType: 'stream',
      status: 'error',
      input: 'lost',
      metadata: { error: 'Interrupted by a server restart before the run finished' },
    });
    expect(body.data.entries[1]).toMatchObject({ status: 'completed', input: 'before the crash' });
    const records = await t.server.log.readStream('run:interrupted-1');
    expect(records.map((r) => r.type)).toEqual(['run.started', 'run.failed']);
    // a second boot finds nothing left to close
    await t.restart();
    expect((await t.server.log.readStream('run:interrupted-1')).length).toBe(2);
  });

  it('aborts runs still going at shutdown once the grace period is over, and records why', async () => {
    const slow = createAgent({ id: 'slow', name: 'Slow', instructions: 'x', model: createDemoModel({ tokenDelayMs: 100 }) });
    t2 = await startTestServer({ agents: [slow], server: { shutdownTimeoutMs: 2500 } });
    const res = await fetch(`${t2.url}/agents/slow/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ') }),
    });
    const frames: string[] = [];
    const reading = (async () => {
      for await (const f of readSse(res)) frames.push(f.event ?? '');
    })();
    while (!frames.includes('text-delta')) await new Promise((r) => setTimeout(r, 10));
    const started = Date.now();
    await t2.server.close();
    await reading;
    expect(Date.now() - started).toBeLessThan(2500);
    expect(frames.at(-1)).toBe('abort');
    await t2.restart();
    const entry = (await api(`${t2.url}/agents/slow/history`)).body.data.entries[0];
    expect(entry).toMatchObject({ status: 'cancelled', metadata: { abortReason: 'Server shutting down' } });
  });
});
