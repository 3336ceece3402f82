/**
 * Answers of commands that meet a stream another node owns, between two nodes' route wrappers: the
 * inbox between them is a direct call through JSON text, the store a stand-in with the shared and ownership
 * capabilities. A stream answer is served on the receiving node through the read route the owner
 * names; a file and the owner's headers arrive as the owner answered; a `move` command waits for
 * the owner to let the stream go and runs where it was received, or answers a 409 naming the owner.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { clusterRoutes, type ClusterRoutes } from '../../src/cluster/cluster-routes.js';
import type { CommandInbox } from '../../src/cluster/inbox.js';
import { ok, type RequestContext, type RouteDef, type RouteResult, type SseSink } from '../../src/contract/routes.js';
import { AppError } from '../../src/errors.js';
import { StreamFencedError } from '../../src/log/capabilities.js';
import type { EventLog } from '../../src/log/types.js';

/** A node's view of the store: caught up at once; `claim` answers from `owner()`. */
function store(nodeId: string, owner: () => string | undefined): EventLog & { claims: number } {
  const s = {
    claims: 0,
    shared: { catchUp: async () => 0 },
    ownership: {
      nodeId,
      claim: async () => {
        s.claims++;
        const o = owner();
        return o === undefined || o === nodeId ? undefined : `owned by node ${o}`;
      },
    },
  };
  return s as unknown as EventLog & { claims: number };
}

/** An inbox that hands each request to the owner's `serve` at once, both ways as JSON text, as `el_inbox` stores them. */
const viaJson = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const bridge = (owner: () => ClusterRoutes): CommandInbox =>
  ({ forward: async (_target: string, req: Parameters<ClusterRoutes['serve']>[0]) => viaJson(await owner().serve(viaJson(req))) }) as unknown as CommandInbox;

function ctx(method: RequestContext['method'], path: string, params: Record<string, string>, body?: unknown): RequestContext {
  return { method, path, params, query: {}, rawQuery: new URLSearchParams(), headers: { 'x-client': 'c1' }, body, origin: 'http://127.0.0.1', signal: new AbortController().signal };
}

function sink(): SseSink & { frames: string[] } {
  const frames: string[] = [];
  return { frames, closed: false, send: (f: Uint8Array) => void frames.push(Buffer.from(f).toString()), end: () => undefined, onClose: () => undefined } as unknown as SseSink & { frames: string[] };
}

const fenced = () => {
  throw new StreamFencedError('thing:7', 'owned by node a');
};

/** The routes of one node: `owns` decides whether its commands run or meet the other node's fence. */
function routes(owns: boolean, seen: string[]): RouteDef[] {
  const base = { auth: 'execution' as const, summary: 's', tags: ['T'] };
  return [
    {
      ...base,
      method: 'POST',
      path: '/things/:id/stream',
      handler: (c) => {
        if (!owns) fenced();
        seen.push(`stream ${c.params.id}`);
        return { kind: 'sse', headers: { 'x-started': 'yes' }, start: () => undefined, follow: { route: 'GET /things/:id/feed', params: { id: c.params.id }, query: { from: '3' } } };
      },
    },
    {
      ...base,
      method: 'GET',
      path: '/things/:id/feed',
      query: z.object({ from: z.string().transform(Number) }),
      handler: (c): RouteResult => ({ kind: 'sse', start: (s) => void s.send(Buffer.from(`feed ${c.params.id} from ${(c.query.from as number) + 1} for ${c.headers['x-client']}`)) }),
    },
    {
      ...base,
      method: 'POST',
      path: '/things/:id/file',
      handler: () => (owns ? { kind: 'body', status: 201, contentType: 'application/octet-stream', body: new Uint8Array([0, 255, 7]), headers: { 'x-file': 'f' } } : fenced()),
    },
    {
      ...base,
      method: 'POST',
      path: '/things/:id/poke',
      handler: (c) => (owns ? { ...ok({ poked: c.params.id }), headers: { 'x-conversation-id': 'conv-1' } } : fenced()),
    },
  ];
}

function twoNodes() {
  const seenA: string[] = [];
  let a: ClusterRoutes | undefined;
  const b = clusterRoutes(
    store('b', () => 'a'),
    bridge(() => a!),
  )!;
  a = clusterRoutes(
    store('a', () => 'a'),
    bridge(() => b),
  )!;
  for (const r of routes(true, seenA)) a.wrap(r);
  const onB = new Map(routes(false, []).map((r) => [`${r.method} ${r.path}`, b.wrap(r)]));
  return { seenA, onB };
}

describe('commands forwarded between nodes', () => {
  it('serves a stream answer on the receiving node through the read route the owner names, with the owner headers', async () => {
    const { seenA, onB } = twoNodes();
    const result = await onB.get('POST /things/:id/stream')!.handler(ctx('POST', '/things/7/stream', { id: '7' }));
    expect(seenA).toEqual(['stream 7']);
    expect(result.kind).toBe('sse');
    if (result.kind !== 'sse') return;
    expect(result.headers).toEqual({ 'x-started': 'yes' });
    const s = sink();
    await result.start(s);
    // the read route ran here, with its query parsed by its own schema and the client's headers
    expect(s.frames).toEqual(['feed 7 from 4 for c1']);
  });

  it('returns a file answer byte for byte with its status, content type and headers', async () => {
    const { onB } = twoNodes();
    const result = await onB.get('POST /things/:id/file')!.handler(ctx('POST', '/things/7/file', { id: '7' }));
    expect(result).toMatchObject({ kind: 'body', status: 201, contentType: 'application/octet-stream', headers: { 'x-file': 'f' } });
    if (result.kind === 'body') expect([...Buffer.from(result.body)]).toEqual([0, 255, 7]);
  });

  it('keeps the headers of a JSON answer', async () => {
    const { onB } = twoNodes();
    const result = await onB.get('POST /things/:id/poke')!.handler(ctx('POST', '/things/7/poke', { id: '7' }));
    expect(result).toMatchObject({ kind: 'body', status: 200, contentType: 'application/json', headers: { 'x-conversation-id': 'conv-1' } });
    if (result.kind === 'body') expect(JSON.parse(String(result.body))).toEqual({ success: true, data: { poked: '7' } });
  });
});

describe('commands that move to the receiving node', () => {
  const moving = (runs: string[]): RouteDef => ({
    method: 'POST',
    path: '/things/:id/chat',
    auth: 'execution',
    summary: 's',
    tags: ['T'],
    whenFenced: 'move',
    handler: (c) => {
      runs.push(c.params.id);
      if (runs.length === 1) fenced();
      return ok({ ranOn: 'b' });
    },
  });

  it('waits until the owner lets the stream go, then runs the command where it was received', async () => {
    let owner: string | undefined = 'a';
    const log = store('b', () => owner);
    const b = clusterRoutes(log, undefined, { moveWaitMs: 5_000 })!;
    const runs: string[] = [];
    const route = b.wrap(moving(runs));
    setTimeout(() => (owner = undefined), 350);
    const result = await route.handler(ctx('POST', '/things/7/chat', { id: '7' }));
    expect(result).toMatchObject({ kind: 'json', data: { ranOn: 'b' } });
    expect(runs).toEqual(['7', '7']);
    expect(log.claims).toBeGreaterThan(1);
  });

  it('answers a 409 naming the owner when it does not let the stream go in time', async () => {
    const b = clusterRoutes(
      store('b', () => 'a'),
      undefined,
      { moveWaitMs: 300 },
    )!;
    const runs: string[] = [];
    const err = await Promise.resolve(b.wrap(moving(runs)).handler(ctx('POST', '/things/7/chat', { id: '7' }))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('CONFLICT');
    expect((err as AppError).message).toMatch(/thing:7 is running on node a, which did not let it go within 300 ms/);
    expect(runs).toEqual(['7']);
  });
});
