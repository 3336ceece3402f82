/**
 * Acknowledged means durable: when the log cannot write a run's terminal record, the caller gets a
 * failure, never a success for a run the log does not hold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { startServer, type EventloomServer } from '../../src/main.js';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { EventLog } from '../../src/log/types.js';
import { agentsModule } from '../../src/agents/module.js';
import { createAgent } from '../../src/agents/define-agent.js';
import { api } from '../helpers/server.js';
import { collectSse } from '../helpers/sse.js';

/** A memory log whose appends of `run.finished` records fail, as a full or broken disk would. */
function failingFinishLog(): EventLog {
  const log = createMemoryLog();
  return new Proxy(log, {
    get(target, prop, receiver) {
      if (prop === 'append') {
        return (stream: string, records: Array<{ type: string }>, options?: unknown) =>
          records.some((r) => r.type === 'run.finished') ? Promise.reject(new Error('disk full')) : target.append(stream, records as never, options as never);
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

let server: EventloomServer;
beforeAll(async () => {
  server = await startServer({
    config: { agents: [createAgent({ id: 'echo', name: 'Echo', instructions: 'Echo.' })] },
    port: 0,
    log: failingFinishLog(),
    logger: pino({ level: 'silent' }),
    env: { NODE_ENV: 'test' },
    modules: [agentsModule],
  });
});
afterAll(async () => {
  await server?.close();
});

describe('agent runs when the log cannot record the finish', () => {
  it('answers /text with 500 instead of the generated text', async () => {
    const r = await api(`${server.url}/agents/echo/text`, { method: 'POST', json: { input: 'hello' } });
    expect(r).toMatchObject({ status: 500, body: { success: false, error: 'Internal server error' } });
    const entry = (await api(`${server.url}/agents/echo/history`)).body.data.entries[0];
    expect(entry.status).toBe('working');
  });

  it('ends /stream with an error part after the finish part', async () => {
    const { frames } = await collectSse(`${server.url}/agents/echo/stream`, { method: 'POST', json: { input: 'hello' } });
    expect(frames.at(-1)!.json).toEqual({ type: 'error', error: 'disk full' });
  });
});
