/**
 * Two real server processes on one PostgreSQL store with a short lease: when the node running an
 * execution is paused (SIGSTOP) or killed (SIGKILL), the other node takes the execution over within
 * the lease plus two seconds and finishes it from its last durable step; the paused node, once
 * continued, cannot append a single record to it.
 */
import { describe, expect, it } from 'vitest';
import { usePgNodes } from '../helpers/pg-nodes.js';
import { api } from '../helpers/server.js';
import type { SpawnedServer } from '../helpers/spawn-server.js';
import { collectSse, readSse, type SseFrame } from '../helpers/sse.js';
import { until } from '../helpers/until.js';

// the console routes (status, feeds) answer the dev flag outside production
const DEV = { headers: { 'x-service-dev': 'true' } };
const LEASE_MS = 1500;
const { startNodes, records } = usePgNodes({ leaseMs: LEASE_MS, env: { LOG_LEVEL: 'info' } });

/** waits as long as a node may take to start, claim or deliver */
const waitFor = <T>(check: () => T | Promise<T>, what: string, ms = 20_000) => until(check, what, ms);

/** Starts a 3 s echo on `node` and resolves once its step is running (seen in the log). */
async function startSlowEcho(node: SpawnedServer, id: string): Promise<void> {
  void fetch(`${node.url}/workflows/echo/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input: { text: 'slow', delayMs: 3000 }, options: { executionId: id } }),
  }).catch(() => undefined);
  await waitFor(async () => (await records(`exec:${id}`)).some((r) => r.type === 'step.started'), 'the step to start');
}

describe('takeover between two server processes', () => {
  it('finishes on the other node an execution whose node was paused past its lease, and fences the paused node', async () => {
    const [a, b] = await startNodes();
    const id = 'paused-owner';
    await startSlowEcho(a, id);
    // the step's effect starts once its start is durable on the node: pause it mid-step, not before its delay began
    await new Promise((r) => setTimeout(r, 500));
    a.child.kill('SIGSTOP');
    const stoppedAt = Date.now();
    const done = await waitFor(async () => {
      const recs = await records(`exec:${id}`);
      return recs.at(-1)?.type === 'execution.completed' ? recs : undefined;
    }, 'the other node to finish the execution');
    const recovered = done.filter((r) => r.type === 'execution.recovered');
    expect(recovered).toHaveLength(1);
    expect(recovered[0].at - stoppedAt).toBeLessThanOrEqual(LEASE_MS + 2000);
    const state = await api(`${b.url}/workflows/echo/executions/${id}/state`);
    expect(state.body.data).toMatchObject({ executionId: id, status: 'completed' });

    // the paused node wakes up with its step done: its append is refused inside the commit
    a.child.kill('SIGCONT');
    await waitFor(async () => /cannot be appended by this node/.test(a.output()), 'the paused node to be refused', 10_000);
    expect(await records(`exec:${id}`)).toEqual(done);
    expect(done.filter((r) => r.type === 'execution.completed')).toHaveLength(1);
  }, 60_000);

  it('takes over the executions of a killed node within the lease plus two seconds, each finished once; its SSE reader resumes on the other node', async () => {
    const [a, b] = await startNodes();
    const ids = Array.from({ length: 5 }, (_, i) => `killed-owner-${i}`);
    await Promise.all(ids.map((id) => startSlowEcho(a, id)));
    // b has work of its own, which the kill must not disturb
    await startSlowEcho(b, 'own-work');
    const id = ids[0];
    // a reader following an execution on the node about to die
    const seen: SseFrame[] = [];
    const res = await fetch(`${a.url}/workflows/echo/executions/${id}/stream`);
    const reading = (async () => {
      try {
        for await (const f of readSse(res)) seen.push(f);
      } catch {
        // the connection dies with the node
      }
    })();
    await waitFor(async () => seen.length >= 2, 'the reader to get the history');
    a.child.kill('SIGKILL');
    const killedAt = Date.now();
    const finished = await Promise.all(
      [...ids, 'own-work'].map((x) =>
        waitFor(async () => {
          const recs = await records(`exec:${x}`);
          return recs.at(-1)?.type === 'execution.completed' ? recs : undefined;
        }, `execution ${x} to finish`),
      ),
    );
    for (const recs of finished.slice(0, ids.length)) {
      const recovered = recs.filter((r) => r.type === 'execution.recovered');
      expect(recovered).toHaveLength(1);
      expect(recovered[0].at - killedAt).toBeLessThanOrEqual(LEASE_MS + 2000);
      expect(recs.filter((r) => r.type === 'execution.completed')).toHaveLength(1);
    }
    expect(finished.at(-1)!.filter((r) => r.type === 'execution.recovered')).toHaveLength(0);
    // the reader reconnects to the other node with Last-Event-ID and misses nothing
    await reading;
    const rest = await collectSse(`${b.url}/workflows/echo/executions/${id}/stream`, { headers: { 'last-event-id': seen.at(-1)!.id! } });
    const frameIds = [...seen, ...rest.frames].map((f) => Number(f.id));
    expect(frameIds).toEqual(frameIds.map((_, i) => i + 1));
    expect(rest.frames.at(-1)!.json).toMatchObject({ type: 'workflow-result', status: 'completed' });
    // the survivor also took over the lease of the read models the nodes share, which the killed node held
    const status = await until(
      async () => {
        const s = await api(`${b.url}/observability/status`, DEV);
        return s.body.data.node.sharedReadModels === 'folds' ? s : undefined;
      },
      'the survivor to fold the shared read models',
      LEASE_MS + 3000,
    );
    expect(status.body.data.node).toEqual({ id: b.id, store: 'postgres', sharedReadModels: 'folds', owns: { executions: 0, agentRuns: 0 } });
  }, 60_000);
});
