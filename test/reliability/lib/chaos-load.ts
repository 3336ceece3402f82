/**
 * The mixed load of the crash-chaos test and what it was told: workflow executions (quick, slow and
 * suspending), resumes, memory message batches, agent streams and SSE readers (POST stream and the
 * attach route), run by a few workers until the process is killed. Every answer that reached the
 * client is an acknowledgement and is recorded in the `Ledger`; requests cut by the kill are recorded
 * as attempted only. The checks after the restart compare the server's state with the ledger.
 */
import { readSse, type SseFrame } from '../../helpers/sse.js';

/** Small seeded PRNG (mulberry32), so a failing run can be replayed with its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface ExecEntry {
  id: string;
  workflow: 'echo' | 'order-approval';
  input: unknown;
  /** what execute (or the first stream frame) answered */
  acked?: { status: string; result: unknown };
  /** a POST stream delivered at least its first frame: the start is durable */
  streamed?: boolean;
  resumeTried?: boolean;
  resumeAcked?: { status: string; result: unknown };
}

export interface ReaderLog {
  executionId: string;
  workflow: string;
  /** frames received before the connection ended */
  frames: Array<{ id: number; event: string; from?: string }>;
  /** true when the stream ended normally (workflow-result seen) */
  ended: boolean;
}

export class Ledger {
  readonly executions = new Map<string, ExecEntry>();
  /** message id → conversation id, for acknowledged save-messages */
  readonly ackedMessages = new Map<string, string>();
  readonly triedMessages = new Set<string>();
  readonly readers: ReaderLog[] = [];
  readonly agentConversations = new Set<string>();
  agentStreamsFinished = 0;
  agentStreamsCut = 0;
  counts = { requests: 0, acked: 0, cut: 0 };
}

async function postJson(url: string, body: unknown, signal: AbortSignal): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function frameOf(f: SseFrame): { id: number; event: string; from?: string } {
  return { id: Number(f.id), event: f.event ?? '', from: f.json?.from };
}

export interface LoadOptions {
  url: string;
  cycle: number;
  random: () => number;
  ledger: Ledger;
  /** aborted when the process is killed: stops the workers */
  stop: AbortSignal;
  workers?: number;
  /** the conversation this cycle's message batches go to */
  conversationId: string;
  userId: string;
}

/** Runs the workers until `stop` aborts; resolves when all of them have noticed. */
export async function runLoad(o: LoadOptions): Promise<void> {
  const { url, cycle, random, ledger } = o;
  let n = 0;
  const next = () => `c${cycle}-${n++}`;
  const pick = <T>(xs: T[]): T | undefined => (xs.length ? xs[Math.floor(random() * xs.length)] : undefined);
  // every request of a worker ends when the process dies (fetch fails), at the latest after this bound
  const signal = () => AbortSignal.timeout(20_000);

  const execute = async (workflow: 'echo' | 'order-approval') => {
    const id = `${next()}-${workflow === 'echo' ? 'e' : 'o'}`;
    const input = workflow === 'echo' ? { text: `t-${id}`, delayMs: Math.floor(random() * 400) } : { items: [{ price: 60 + Math.floor(random() * 100), qty: 2 }] };
    const entry: ExecEntry = { id, workflow, input };
    ledger.executions.set(id, entry);
    const r = await postJson(`${url}/workflows/${workflow}/execute`, { input, options: { executionId: id } }, signal());
    if (r.status !== 200) throw new Error(`execute ${id} answered ${r.status} ${JSON.stringify(r.body)}`);
    entry.acked = { status: r.body.data.status, result: r.body.data.result };
  };

  const resume = async () => {
    const candidates = [...ledger.executions.values()].filter((e) => e.workflow === 'order-approval' && e.acked?.status === 'suspended' && !e.resumeTried);
    const e = pick(candidates);
    if (!e) return execute('order-approval');
    e.resumeTried = true;
    const r = await postJson(`${url}/workflows/order-approval/executions/${e.id}/resume`, { resumeData: { approved: true } }, signal());
    if (r.status !== 200) throw new Error(`resume ${e.id} answered ${r.status} ${JSON.stringify(r.body)}`);
    e.resumeAcked = { status: r.body.data.status, result: r.body.data.result };
  };

  const saveMessages = async () => {
    const batch = Array.from({ length: 1 + Math.floor(random() * 4) }, () => ({
      id: `m-${next()}`,
      role: random() < 0.5 ? 'user' : 'assistant',
      content: `chaos ${n} ${'x'.repeat(Math.floor(random() * 200))}`,
    }));
    for (const m of batch) ledger.triedMessages.add(m.id);
    const r = await postJson(`${url}/api/memory/save-messages`, { userId: o.userId, conversationId: o.conversationId, messages: batch }, signal());
    if (r.status !== 200) throw new Error(`save-messages answered ${r.status} ${JSON.stringify(r.body)}`);
    for (const m of batch) ledger.ackedMessages.set(m.id, o.conversationId);
  };

  const agentStream = async () => {
    const conversationId = `agent-${next()}`;
    ledger.agentConversations.add(conversationId);
    const route = random() < 0.5 ? 'stream' : 'chat';
    const input = random() < 0.3 ? 'what is the weather in Oslo?' : `tell me something about chaos number ${n}`;
    const res = await fetch(`${url}/agents/assistant/${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input, options: { memory: { userId: o.userId, conversationId } } }),
      signal: signal(),
    });
    if (res.status !== 200) throw new Error(`agent ${route} answered ${res.status} ${await res.text()}`);
    let finished = false;
    try {
      for await (const f of readSse(res)) if (f.event === 'finish' || f.data === '[DONE]') finished = true;
    } finally {
      if (finished) ledger.agentStreamsFinished++;
      else ledger.agentStreamsCut++;
    }
  };

  const readStream = async (res: Response, log: ReaderLog) => {
    for await (const f of readSse(res)) {
      log.frames.push(frameOf(f));
      if (f.event === 'workflow-result') log.ended = true;
    }
  };

  const streamExecution = async () => {
    const workflow = random() < 0.5 ? 'echo' : 'order-approval';
    const input = workflow === 'echo' ? { text: `s-${n}`, delayMs: Math.floor(random() * 600) } : { items: [{ price: 80, qty: 2 }] };
    const id = `${next()}-s`;
    const entry: ExecEntry = { id, workflow, input };
    ledger.executions.set(id, entry);
    const res = await fetch(`${url}/workflows/${workflow}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input, options: { executionId: id } }),
      signal: AbortSignal.timeout(2_000),
    });
    const log: ReaderLog = { executionId: id, workflow, frames: [], ended: false };
    ledger.readers.push(log);
    try {
      await readStream(res, log);
    } catch {
      /* cut by the kill or by our own time bound (a suspended run's stream stays open) */
    }
    if (log.frames.length > 0) entry.streamed = true;
  };

  const attach = async () => {
    const e = pick([...ledger.executions.values()].filter((x) => x.acked || x.streamed));
    if (!e) return execute('echo');
    const res = await fetch(`${url}/workflows/${e.workflow}/executions/${e.id}/stream`, { signal: AbortSignal.timeout(1_500) });
    if (res.status !== 200) throw new Error(`attach ${e.id} answered ${res.status}`);
    const log: ReaderLog = { executionId: e.id, workflow: e.workflow, frames: [], ended: false };
    ledger.readers.push(log);
    try {
      await readStream(res, log);
    } catch {
      /* cut */
    }
  };

  const actions: Array<[number, () => Promise<void>]> = [
    [3, () => execute('echo')],
    [2, () => execute('order-approval')],
    [2, resume],
    [3, saveMessages],
    [1, agentStream],
    [1, streamExecution],
    [1, attach],
  ];
  const total = actions.reduce((s, [w]) => s + w, 0);
  const choose = () => {
    let r = random() * total;
    for (const [w, f] of actions) if ((r -= w) < 0) return f;
    return actions[0][1];
  };

  const worker = async () => {
    while (!o.stop.aborted) {
      ledger.counts.requests++;
      try {
        await choose()();
        ledger.counts.acked++;
      } catch (err) {
        if (!o.stop.aborted) throw err;
        ledger.counts.cut++;
      }
    }
  };
  await Promise.all(Array.from({ length: o.workers ?? 4 }, worker));
}
