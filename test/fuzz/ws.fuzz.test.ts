/**
 * WebSocket fuzzer: fast-check opens real WebSocket connections to every endpoint (`/ws`, `/ws/logs`,
 * `/ws/observability[/…]`, an unknown one) with fuzzed handshake queries and sends fuzzed messages: any
 * JSON, the endpoints' own message types with wrong fields, malformed text, binary frames that are not
 * UTF-8, deep nesting, messages over the 1 MiB limit. A rejected handshake must be an HTTP 4xx with the
 * envelope; an accepted one gets only JSON text messages, and when the server closes it, it does so with
 * a meaningful code (1009 too big, 1013 too slow, 1000). A message handler that throws would end the
 * process, so the server is probed after every case; afterwards the log passes its integrity check.
 */
import fc from 'fast-check';
import WebSocket from 'ws';
import { afterAll, expect, it } from 'vitest';
import { send } from '../reliability/lib/raw-http.js';
import { oddString, oddValue, pct } from './lib/generators.js';
import { CONSOLE_KEY, integrityAfterStop, startFuzzTarget } from './lib/fuzz-server.js';

const TOTAL_RUNS = Number(process.env.FUZZ_RUNS ?? 400);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const RUNS = Math.max(30, Math.ceil(TOTAL_RUNS / 8));

const target = await startFuzzTarget();
const { t, world } = target;
afterAll(() => target.close());

type Msg = { kind: 'text'; text: string } | { kind: 'binary'; bytes: number[] } | { kind: 'deep'; depth: number } | { kind: 'huge'; size: number };

const queryName = fc.constantFrom('dev', 'key', 'token', 'level', 'limit', 'agentId', 'entityType', 'entityId', 'workflowId', 'executionId', 'conversationId', 'since', 'until');
const queryValue = fc.oneof(
  oddString,
  fc.constantFrom('true', 'false', CONSOLE_KEY, 'info', 'warn', 'bogus', '0', '-1', '5000', 'agent', 'workflow', '2024-01-01T00:00:00Z', world.authorizations[0].slice(7)),
);
const path = fc.constantFrom('/ws', '/ws/logs', '/ws/observability', '/ws/observability/agents/x', '/ws/nope', '/ws/logs/extra');
const message: fc.Arbitrary<Msg> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v): Msg => ({ kind: 'text', text: JSON.stringify(v) })), weight: 3 },
  {
    arbitrary: fc
      .record({ type: fc.constantFrom('PING', 'SUBSCRIBE', 'updateFilter', 'ECHO', 'ping', ''), filter: oddValue, extra: oddValue })
      .map((m): Msg => ({ kind: 'text', text: JSON.stringify(m) })),
    weight: 3,
  },
  {
    arbitrary: fc
      .record({ level: fc.oneof(oddString, fc.constantFrom('debug', 'error')), limit: oddValue, since: oddValue, agentId: oddValue })
      .map((filter): Msg => ({ kind: 'text', text: JSON.stringify({ type: 'updateFilter', filter }) })),
    weight: 2,
  },
  { arbitrary: oddString.map((text): Msg => ({ kind: 'text', text })), weight: 2 },
  { arbitrary: fc.uint8Array({ maxLength: 32 }).map((b): Msg => ({ kind: 'binary', bytes: [...b, 0xff, 0xfe] })), weight: 1 },
  { arbitrary: fc.constantFrom(250, 257, 5_000, 100_000).map((depth): Msg => ({ kind: 'deep', depth })), weight: 2 },
  { arbitrary: fc.constantFrom(1024 * 1024 + 10, 2 * 1024 * 1024).map((size): Msg => ({ kind: 'huge', size })), weight: 1 },
);

function payload(m: Msg): { data: string | Buffer; binary: boolean } {
  switch (m.kind) {
    case 'text':
      return { data: m.text, binary: false };
    case 'binary':
      return { data: Buffer.from(m.bytes), binary: true };
    case 'deep':
      return { data: `{"type":"PING","x":${'['.repeat(m.depth)}${']'.repeat(m.depth)}}`, binary: false };
    case 'huge':
      return { data: JSON.stringify({ type: 'PING', pad: 'x'.repeat(m.size) }), binary: false };
  }
}

interface Outcome {
  handshake?: { status: number; body: string };
  opened: boolean;
  messages: string[];
  closeCode?: number;
  error?: string;
}

async function runCase(p: string, query: Array<[string, string]>, msgs: Msg[]): Promise<Outcome> {
  const qs = query.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&');
  const url = `${t.url.replace('http', 'ws')}${p}${qs ? `?${qs}` : ''}`;
  const out: Outcome = { opened: false, messages: [] };
  const ws = new WebSocket(url, { handshakeTimeout: 5_000, maxPayload: 64 * 1024 * 1024 });
  const closed = new Promise<void>((resolve) => {
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString('utf8')));
      res.on('end', () => {
        out.handshake = { status: res.statusCode ?? 0, body };
        resolve();
      });
    });
    ws.on('message', (data, isBinary) => out.messages.push(isBinary ? '<binary>' : data.toString()));
    ws.on('close', (code) => {
      out.closeCode = code;
      resolve();
    });
    ws.on('error', (err) => {
      if (!out.handshake) out.error = err.message;
    });
  });
  const opened = new Promise<boolean>((resolve) => {
    ws.on('open', () => resolve(true));
    void closed.then(() => resolve(false));
  });
  out.opened = await Promise.race([opened, new Promise<boolean>((r) => setTimeout(() => r(false), 6_000))]);
  if (out.opened) {
    for (const m of msgs) {
      if (ws.readyState !== WebSocket.OPEN) break;
      const { data, binary } = payload(m);
      ws.send(data, { binary });
    }
    // a moment for the answers
    await Promise.race([closed, new Promise((r) => setTimeout(r, 150))]);
    if (ws.readyState === WebSocket.OPEN) ws.close(1000);
    await Promise.race([closed, new Promise((r) => setTimeout(r, 3_000))]);
  } else if (!out.handshake && !out.error) {
    await Promise.race([closed, new Promise((r) => setTimeout(r, 3_000))]);
  }
  ws.terminate();
  return out;
}

it('answers every fuzzed WebSocket handshake and message with an envelope, JSON messages or a meaningful close, and never crashes', async () => {
  await fc.assert(
    fc.asyncProperty(path, fc.array(fc.tuple(queryName, queryValue), { maxLength: 4 }), fc.array(message, { minLength: 1, maxLength: 3 }), async (p, query, msgs) => {
      const o = await runCase(p, query, msgs);
      const what = `${p} ?${JSON.stringify(query)} messages ${JSON.stringify(msgs.map((m) => (m.kind === 'text' ? m.text.slice(0, 80) : m.kind === 'binary' ? 'binary' : `${m.kind} ${'depth' in m ? m.depth : m.size}`)))}`;
      if (o.handshake) {
        expect(o.handshake.status, what).toBeGreaterThanOrEqual(400);
        expect(o.handshake.status, what).toBeLessThan(500);
        expect(JSON.parse(o.handshake.body), what).toMatchObject({ success: false, error: expect.any(String) });
      } else {
        expect(o.error, what).toBeUndefined();
        expect(o.opened, what).toBe(true);
        for (const m of o.messages) expect(() => JSON.parse(m), `${what}: ${m.slice(0, 100)}`).not.toThrow();
        // over 1 MiB: closed with 1009; when the server closes while the client is still writing the rest of a
        // much larger message, the client only sees the reset (1006)
        if (msgs.some((m) => m.kind === 'huge')) expect([1009, 1006], what).toContain(o.closeCode);
        else if (o.closeCode !== undefined) expect([1000, 1005, 1009, 1013], `${what}: close ${o.closeCode}`).toContain(o.closeCode);
      }
      const probe = await send(t.url, { method: 'GET', path: '/workflows' }, { timeoutMs: 5_000 });
      expect(probe.status).toBe(200);
    }),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
}, 180_000);

it('leaves an event log that passes the integrity check when reopened after the WebSocket fuzzing', async () => {
  const report = await integrityAfterStop(t);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
});
