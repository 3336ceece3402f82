/**
 * A resumable chat stream resumed on another node: two real server processes share one PostgreSQL
 * store; a slow chat generates on node A while its client leaves, and node B, which holds none of its
 * chunks, relays it from A (it finds A among the live nodes and long-polls A's `…/frames` through the
 * database): every chunk from the first (or after `Last-Event-ID`) in order, then `[DONE]`; once the
 * generation is over, B answers 204 like A.
 */
import path from 'node:path';
import { expect, it } from 'vitest';
import { api } from '../helpers/server.js';
import { collectSse, readSse } from '../helpers/sse.js';
import { usePgNodes } from '../helpers/pg-nodes.js';
import type { SpawnedServer } from '../helpers/spawn-server.js';

// its `slow` agent answers ~100 ms per word
const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'workflows-shutdown.config.ts');
const { startNodes } = usePgNodes({ config: CONFIG });

const WORDS = 'one two three four five six seven eight nine ten eleven twelve';
const chatBody = (conversationId: string) => ({ input: WORDS, options: { resumableStream: true, memory: { userId: 'u1', conversationId } } });

/** Starts a resumable chat on `node` and leaves once its first text chunk arrived (the generation goes on). */
async function startAndLeave(node: SpawnedServer, conversationId: string): Promise<void> {
  const controller = new AbortController();
  const res = await fetch(`${node.url}/agents/slow/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody(conversationId)),
    signal: controller.signal,
  });
  for await (const f of readSse(res)) if (f.json?.type === 'text-delta') break;
  controller.abort();
}

const textOf = (frames: Array<{ json?: any }>) =>
  frames
    .filter((f) => f.json?.type === 'text-delta')
    .map((f) => f.json.delta)
    .join('');

it('relays a resumable chat generating on one node to a client resuming on the other, from the first chunk or after Last-Event-ID, to [DONE]', async () => {
  const [a, b] = await startNodes(2);
  // the node that does not generate it holds nothing of it: its frames route says so
  await startAndLeave(a, 'c-relay');
  const none = await api(`${b.url}/agents/slow/chat/c-relay/frames?userId=u1`);
  expect(none).toMatchObject({ status: 404, body: { success: false, error: 'No active resumable chat stream for conversation c-relay on this node' } });

  const resumed = await collectSse(`${b.url}/agents/slow/chat/c-relay/stream?userId=u1`);
  expect(resumed.status).toBe(200);
  expect(resumed.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
  expect(resumed.frames[0]).toMatchObject({ event: 'start', id: '1' });
  const ids = resumed.frames.filter((f) => f.id !== undefined).map((f) => Number(f.id));
  expect(ids).toEqual(ids.map((_, i) => i + 1));
  expect(textOf(resumed.frames)).toBe(`You said: ${WORDS}`);
  expect(resumed.frames.at(-1)!.data).toBe('[DONE]');
  // over: nothing left to resume, on either node
  expect((await api(`${b.url}/agents/slow/chat/c-relay/stream?userId=u1`)).status).toBe(204);
  expect((await api(`${a.url}/agents/slow/chat/c-relay/stream?userId=u1`)).status).toBe(204);

  // after Last-Event-ID: the chunks after it, no earlier one
  await startAndLeave(a, 'c-after');
  const after = await collectSse(`${b.url}/agents/slow/chat/c-after/stream?userId=u1`, { headers: { 'last-event-id': '3' } });
  expect(after.frames[0].id).toBe('4');
  expect(after.frames.at(-1)!.data).toBe('[DONE]');
}, 60_000);

it('serves the frames of an active stream by long polling on the node generating it', async () => {
  const [a] = await startNodes(1);
  await startAndLeave(a, 'c-poll');
  const first = await api(`${a.url}/agents/slow/chat/c-poll/frames?userId=u1`);
  expect(first.status).toBe(200);
  const { frames, last, done } = first.body.data as { frames: string[]; last: number; done: boolean };
  expect(frames.length).toBe(last);
  expect(frames[0]).toMatch(/^event: start\nid: 1\n/);
  expect(done).toBe(false);
  // nothing after the newest chunk yet: the request waits for the next one
  const next = await api(`${a.url}/agents/slow/chat/c-poll/frames?userId=u1&after=${last}&waitMs=5000`);
  expect(next.status).toBe(200);
  expect(next.body.data.frames.length).toBeGreaterThanOrEqual(1);
  expect(next.body.data.frames[0]).toContain(`id: ${last + 1}\n`);
  expect(next.body.data.last).toBe(last + next.body.data.frames.length);
  expect((await api(`${a.url}/agents/slow/chat/c-poll/frames?userId=u1&waitMs=20000`)).status).toBe(400);
}, 60_000);
