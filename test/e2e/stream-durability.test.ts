/**
 * What a client sees as finished is durable (the real CLI, SIGKILL, restart on the same data
 * directory). For each streaming route: 20 calls with memory, each read to its last frame and EOF,
 * except the last call, whose reader stops at its terminal frame (what a client takes as "done") and
 * the process is killed at once. After the restart the conversation holds every message of every
 * call (user and assistant), and each agent run has its terminal record. The JSON routes (`/text`,
 * `/object`, a workflow's `/execute`) get the same test: killed right after the last response.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killSpawned, spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';
import { api } from '../helpers/server.js';
import { collectSse } from '../helpers/sse.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'stream-durability.config.ts');
const CALLS = 20;
const dirs: string[] = [];
let server: SpawnedServer | undefined;

afterAll(async () => {
  await killSpawned(server);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Route {
  name: string;
  /** the request of call i, with the memory scope */
  call(i: number, memory: { userId: string; conversationId: string }): { path: string; json: unknown };
  /** the frame that tells a client the call is done (none: a JSON response) */
  terminal?: string;
  /** the last frame before EOF */
  lastEvent?: string;
  lastData?: string;
}

const PERSON = { type: 'object', properties: { n: { type: 'number' } } };

const ROUTES: Route[] = [
  {
    name: 'POST /agents/:id/stream',
    call: (i, memory) => ({ path: '/agents/assistant/stream', json: { input: `stream message ${i}`, options: { memory } } }),
    terminal: 'finish',
    lastEvent: 'finish',
  },
  {
    name: 'POST /agents/:id/chat',
    call: (i, memory) => ({ path: '/agents/assistant/chat', json: { input: `chat message ${i}`, options: { memory } } }),
    terminal: 'finish',
    lastEvent: undefined,
    lastData: '[DONE]',
  },
  {
    name: 'POST /agents/:id/stream-object',
    call: (i, memory) => ({ path: '/agents/assistant/stream-object', json: { input: `object ${i}`, schema: PERSON, options: { memory } } }),
    terminal: 'object',
    lastEvent: 'object',
  },
  {
    name: 'POST /workflows/:id/stream',
    call: (i, memory) => ({ path: '/workflows/ask/stream', json: { input: { question: `workflow question ${i}` }, options: memory } }),
    terminal: 'workflow-result',
    lastEvent: 'workflow-result',
  },
  { name: 'POST /agents/:id/text', call: (i, memory) => ({ path: '/agents/assistant/text', json: { input: `text message ${i}`, options: { memory } } }) },
  { name: 'POST /agents/:id/object', call: (i, memory) => ({ path: '/agents/assistant/object', json: { input: `object ${i}`, schema: PERSON, options: { memory } } }) },
  { name: 'POST /workflows/:id/execute', call: (i, memory) => ({ path: '/workflows/ask/execute', json: { input: { question: `workflow question ${i}` }, options: memory } }) },
];

describe('a stream that ended is durable, memory included', () => {
  for (const route of ROUTES) {
    it(`${route.name}: every message of 20 finished calls survives a SIGKILL right after the last one's ${route.terminal ? 'terminal frame' : 'response'}`, async () => {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-stream-kill-'));
      dirs.push(dataDir);
      const memory = { userId: 'kill-test', conversationId: `conv-${route.name.replace(/\W+/g, '-')}` };
      server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
      for (let i = 0; i < CALLS; i++) {
        const { path: p, json } = route.call(i, memory);
        const lastCall = i === CALLS - 1;
        if (route.terminal === undefined) {
          const res = await api(`${server.url}${p}`, { method: 'POST', json });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          continue;
        }
        const res = await collectSse(`${server.url}${p}`, { method: 'POST', json }, lastCall ? (f) => f.event === route.terminal : undefined);
        expect(res.status).toBe(200);
        const last = res.frames.at(-1)!;
        if (lastCall) {
          expect(last.event).toBe(route.terminal);
          break;
        }
        expect(last.event).toBe(route.lastEvent);
        if (route.lastData !== undefined) expect(last.data).toBe(route.lastData);
      }
      server.child.kill('SIGKILL');
      expect(await server.exited).toBe('SIGKILL');

      server = await spawnServer(['--port', '0', '--data', dataDir, '--config', CONFIG]);
      const r = await api(`${server.url}/api/memory/conversations/${memory.conversationId}/messages?agentId=assistant&limit=1000`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const messages = r.body.data.messages as Array<{ role: string }>;
      expect(messages.filter((m) => m.role === 'user').length).toBe(CALLS);
      expect(messages.filter((m) => m.role === 'assistant').length).toBe(CALLS);
      const history = await api(`${server.url}/agents/assistant/history?limit=100`);
      const entries = history.body.data.entries as Array<{ status: string }>;
      expect(entries.length).toBe(CALLS);
      expect(entries.every((e) => e.status === 'completed')).toBe(true);
      server.child.kill('SIGKILL');
      await server.exited;
    }, 120_000);
  }
});
