/**
 * The soak's load: weighted HTTP actions run by concurrent workers (workflow executions that complete or
 * suspend and are resumed, workflow streams and attach readers, some dropped mid-stream, agent calls with
 * memory, some disconnected mid-generation, memory message batches and deletes, conversations deleted and
 * created, queries, a direct tool call) plus long-lived WebSocket feed clients and a connect/disconnect churn.
 *
 * The live data set is kept steady on purpose: conversations are rotated (a conversation no request is using
 * is deleted and a new one takes its place) and suspended executions are resumed about as fast as they are
 * made. What the server keeps per live item (message vectors of the search index, for one) then stays level,
 * and memory that still grows is a leak rather than data. Executions and agent runs accumulate in the log on
 * disk, as they would in production; the server must not keep them in memory.
 *
 * Every answer is checked: an unexpected status, a body that is not the JSON envelope, a network error or a
 * 30 s time-out is a failure.
 */
import WebSocket from 'ws';
import { readSse } from '../../test/helpers/sse.js';

export class SoakStats {
  requests = 0;
  failures = 0;
  /** failures while the server was frozen by a heap snapshot: reported, not counted */
  failuresWhilePaused = 0;
  byKind: Record<string, number> = {};
  failureSamples: string[] = [];
  /** set while a heap snapshot freezes the server, and a little after */
  paused = false;
  stopping = false;

  fail(kind: string, what: string): void {
    if (this.stopping) return;
    if (this.paused) {
      this.failuresWhilePaused++;
      return;
    }
    this.failures++;
    if (this.failureSamples.length < 50) this.failureSamples.push(`${new Date().toISOString()} ${kind}: ${what.slice(0, 500)}`);
  }

  count(kind: string): void {
    this.requests++;
    this.byKind[kind] = (this.byKind[kind] ?? 0) + 1;
  }
}

type Init = RequestInit & { json?: unknown };

/** One JSON request; returns the parsed envelope (or text), or undefined after recording a failure. */
export async function call(stats: SoakStats, kind: string, url: string, init: Init = {}, expect: number[] = [200]): Promise<any> {
  stats.count(kind);
  const { json, ...rest } = init;
  try {
    const res = await fetch(url, {
      ...rest,
      headers: { ...(json !== undefined ? { 'content-type': 'application/json' } : {}), ...(rest.headers as Record<string, string>) },
      body: json !== undefined ? JSON.stringify(json) : rest.body,
      signal: rest.signal ?? AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!expect.includes(res.status)) return stats.fail(kind, `${res.status} ${text.slice(0, 300)}`);
    if (!res.headers.get('content-type')?.startsWith('application/json')) return text;
    const body = JSON.parse(text);
    if (typeof body !== 'object' || body === null || typeof body.success !== 'boolean') return stats.fail(kind, `not an envelope: ${text.slice(0, 200)}`);
    return body;
  } catch (err) {
    const name = (err as Error).name;
    stats.fail(kind, name === 'AbortError' || name === 'TimeoutError' ? 'timed out after 30 s' : (err as Error).message);
  }
}

/** Reads an SSE response to its end, or drops it after `dropAfterFrames` event frames (a client going away). */
async function stream(stats: SoakStats, kind: string, url: string, init: Init = {}, dropAfterFrames?: number): Promise<number> {
  stats.count(kind);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  let frames = 0;
  try {
    const { json, ...rest } = init;
    const res = await fetch(url, {
      ...rest,
      headers: json !== undefined ? { 'content-type': 'application/json' } : undefined,
      body: json !== undefined ? JSON.stringify(json) : undefined,
      signal: controller.signal,
    });
    if (res.status !== 200) {
      stats.fail(kind, `${res.status} ${(await res.text()).slice(0, 300)}`);
      return 0;
    }
    // frames as an EventSource sees them: the opening and keep-alive comments are not frames
    for await (const _frame of readSse(res)) {
      if (++frames === dropAfterFrames) {
        controller.abort();
        break;
      }
    }
  } catch (err) {
    if ((err as Error).name !== 'AbortError' || dropAfterFrames === undefined) stats.fail(kind, (err as Error).message);
  } finally {
    clearTimeout(timer);
  }
  return frames;
}

const SOAK_USER = 'soak-user';

/** Conversations in use by the load; one that no request holds can be rotated out. */
export class ConversationPool {
  private readonly busy = new Map<string, number>();
  private next = 0;

  constructor(private readonly prefix: string) {}

  get size(): number {
    return this.busy.size;
  }

  fresh(): string {
    return `${this.prefix}-${this.next++}`;
  }

  add(id: string): void {
    this.busy.set(id, 0);
  }

  /** Runs `fn` with a random conversation that cannot be rotated out meanwhile. */
  async using<T>(fn: (conversationId: string) => Promise<T>): Promise<T> {
    const ids = [...this.busy.keys()];
    const id = ids[Math.floor(Math.random() * ids.length)];
    this.busy.set(id, (this.busy.get(id) ?? 0) + 1);
    try {
      return await fn(id);
    } finally {
      const n = this.busy.get(id);
      if (n !== undefined) this.busy.set(id, n - 1);
    }
  }

  /** Takes an idle conversation out of the pool (undefined when every one is in use). */
  takeIdle(): string | undefined {
    for (const [id, n] of this.busy) {
      if (n === 0) {
        this.busy.delete(id);
        return id;
      }
    }
    return undefined;
  }
}

export interface SoakShared {
  finished: string[];
  suspended: string[];
  conversations: ConversationPool;
  n: number;
}

export type SoakAction = [name: string, weight: number, run: () => Promise<unknown>];

/** Creates a conversation and adds it to the pool. */
export async function createConversation(stats: SoakStats, base: string, shared: SoakShared): Promise<void> {
  const conversationId = shared.conversations.fresh();
  const body = await call(stats, 'create-conversation', `${base}/api/memory/conversations`, { method: 'POST', json: { userId: SOAK_USER, resourceId: 'assistant', conversationId } }, [201]);
  if (body?.success) shared.conversations.add(conversationId);
}

/** The load mix. */
export function soakActions(stats: SoakStats, base: string, shared: SoakShared): SoakAction[] {
  const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)];
  const id = () => `soak-${shared.n++}`;
  const keep = (xs: string[], x: string, max = 500) => {
    xs.push(x);
    if (xs.length > max) xs.splice(0, xs.length - max);
  };
  const user = SOAK_USER;
  const convs = shared.conversations;
  return [
    [
      'execute-echo',
      6,
      async () => {
        const body = await call(stats, 'execute-echo', `${base}/workflows/echo/execute`, { method: 'POST', json: { input: { text: 'soak', delayMs: Math.floor(Math.random() * 30) } } });
        if (body?.data?.executionId) keep(shared.finished, body.data.executionId);
      },
    ],
    [
      'execute-order',
      3,
      async () => {
        const body = await call(stats, 'execute-order', `${base}/workflows/order-approval/execute`, { method: 'POST', json: { input: { items: [{ price: 80, qty: 2 }] } } });
        if (body?.data?.status === 'suspended') shared.suspended.push(body.data.executionId);
      },
    ],
    // resumes outnumber suspensions a little, so the suspended set stays small
    [
      'resume',
      4,
      async () => {
        const exec = shared.suspended.shift();
        if (exec) await call(stats, 'resume', `${base}/workflows/order-approval/executions/${exec}/resume`, { method: 'POST', json: { resumeData: { approved: Math.random() < 0.5 } } });
      },
    ],
    ['workflow-stream', 2, () => stream(stats, 'workflow-stream', `${base}/workflows/echo/stream`, { method: 'POST', json: { input: { text: 'streamed' } } })],
    [
      'attach',
      2,
      async () => {
        const exec = shared.finished.length ? pick(shared.finished) : undefined;
        if (!exec) return;
        // half of the attach readers go away after the first frame
        await stream(stats, 'attach', `${base}/workflows/echo/executions/${exec}/stream`, {}, Math.random() < 0.5 ? 1 : undefined);
      },
    ],
    [
      'agent-text',
      3,
      () =>
        convs.using((conversationId) =>
          call(stats, 'agent-text', `${base}/agents/assistant/text`, {
            method: 'POST',
            json: { input: Math.random() < 0.3 ? 'weather in Paris?' : 'hello there', options: { memory: { userId: user, conversationId } } },
          }),
        ),
    ],
    [
      'agent-stream',
      2,
      () =>
        convs.using((conversationId) => {
          const kind = Math.random() < 0.5 ? 'stream' : 'chat';
          // a quarter of the readers disconnect after two frames (the generation is cancelled and recorded)
          return stream(
            stats,
            `agent-${kind}`,
            `${base}/agents/assistant/${kind}`,
            { method: 'POST', json: { input: 'tell me a story', options: { memory: { userId: user, conversationId } } } },
            Math.random() < 0.25 ? 2 : undefined,
          );
        }),
    ],
    [
      'messages',
      3,
      () =>
        convs.using(async (conversationId) => {
          const ids = [id(), id()];
          await call(stats, 'save-messages', `${base}/api/memory/save-messages`, {
            method: 'POST',
            json: { userId: user, conversationId, messages: ids.map((mid) => ({ id: mid, role: 'user', content: `soak message ${mid}` })) },
          });
          if (Math.random() < 0.5) await call(stats, 'delete-messages', `${base}/api/memory/messages/delete`, { method: 'POST', json: { userId: user, conversationId, messageIds: [ids[0]] } });
        }),
    ],
    ['list-messages', 1, () => convs.using((conversationId) => call(stats, 'list-messages', `${base}/api/memory/conversations/${conversationId}/messages?limit=50&userId=${user}`))],
    ['search', 1, () => call(stats, 'search', `${base}/api/memory/search?searchQuery=${encodeURIComponent('soak message story')}&userId=${user}&limit=5`)],
    [
      'rotate-conversation',
      1,
      async () => {
        const old = convs.takeIdle();
        if (!old) return;
        await call(stats, 'delete-conversation', `${base}/api/memory/conversations/${old}`, { method: 'DELETE' });
        await createConversation(stats, base, shared);
      },
    ],
    ['list-executions', 2, () => call(stats, 'list-executions', `${base}/workflows/executions?limit=20&status=${pick(['completed', 'suspended', 'running'])}`)],
    ['state', 1, () => call(stats, 'state', `${base}/workflows/echo/executions/${shared.finished.length ? pick(shared.finished) : 'none'}/state`, {}, [200, 404])],
    ['history', 1, () => call(stats, 'history', `${base}/agents/assistant/history?limit=10`)],
    ['logs', 1, () => call(stats, 'logs', `${base}/api/logs?limit=50`)],
    ['traces', 1, () => call(stats, 'traces', `${base}/observability/traces?limit=20&dev=true`)],
    ['tool', 1, () => call(stats, 'tool', `${base}/tools/getWeather/execute`, { method: 'POST', json: { input: { city: 'Oslo' } } })],
  ];
}

/** One load loop: weighted random actions until `until`, `thinkMs` apart. `only` keeps the named actions. */
export async function soakWorker(table: SoakAction[], stats: SoakStats, until: number, thinkMs: number): Promise<void> {
  const total = table.reduce((s, [, w]) => s + w, 0);
  while (Date.now() < until && !stats.stopping) {
    let r = Math.random() * total;
    const action = table.find(([, w]) => (r -= w) < 0)?.[2] ?? table[0][2];
    await action();
    if (thinkMs > 0) await new Promise((res) => setTimeout(res, thinkMs));
  }
}

export interface SoakSockets {
  received(): number;
  churned(): number;
  done: Promise<void>;
}

/** Long-lived feed clients that read everything, plus a connect/disconnect churn loop. */
export function soakSockets(stats: SoakStats, base: string, until: number): SoakSockets {
  const wsBase = base.replace('http', 'ws');
  let received = 0;
  let churned = 0;
  let closing = false;
  const longLived = ['/ws/observability?dev=true', '/ws/observability?dev=true', '/ws/logs'].map((p) => {
    const ws = new WebSocket(wsBase + p);
    ws.on('message', () => received++);
    ws.on('close', (code) => {
      if (!closing) stats.fail('ws-long-lived', `${p} closed with ${code}`);
    });
    ws.on('error', (err) => stats.fail('ws-long-lived', `${p}: ${err.message}`));
    return ws;
  });
  const churn = async () => {
    while (Date.now() < until && !stats.stopping) {
      await new Promise<void>((resolve) => {
        const p = ['/ws/observability?dev=true', '/ws/logs', '/ws'][churned % 3];
        const ws = new WebSocket(wsBase + p);
        const t = setTimeout(() => ws.terminate(), 5_000);
        ws.on('message', () => {
          // abrupt half the time (no close handshake), polite otherwise
          if (churned % 2) ws.terminate();
          else ws.close();
        });
        ws.on('close', () => {
          clearTimeout(t);
          churned++;
          resolve();
        });
        ws.on('error', (err) => {
          stats.fail('ws-churn', `${p}: ${err.message}`);
          clearTimeout(t);
          resolve();
        });
      });
      await new Promise((r) => setTimeout(r, 200));
    }
    closing = true;
    for (const ws of longLived) ws.close();
  };
  return { received: () => received, churned: () => churned, done: churn() };
}
