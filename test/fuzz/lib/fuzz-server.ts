/**
 * The server the route fuzzer attacks, and what the fuzzer knows about it: the example agents and
 * workflows, JWT auth and a console key switched on (so the auth and user-merge paths are fuzzed too),
 * the update routes pointed at a closed loopback port with an npm command that does not exist (nothing
 * is ever installed, nothing leaves the machine), `./.env` writes redirected into a temp directory,
 * and seeded data (executions completed and suspended, a conversation with messages, agent runs,
 * traces) so that generated requests can name real ids and reach deep into handlers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import type { RouteDef } from '../../../src/contract/routes.js';
import { checkLogIntegrity, openLevelLog, type IntegrityReport } from '../../../src/log/index.js';
import { trackedPackages, DEFAULT_PACKAGE_JSON } from '../../../src/observability/updates.js';
import { assistantAgent } from '../../../examples/agents/assistant.js';
import { echoWorkflow, orderApprovalWorkflow } from '../../../examples/workflows/index.js';
import { api, startTestServer, type TestServer } from '../../helpers/server.js';
import type { FuzzCase, FuzzWorld } from './generators.js';
import type { RawRequest } from '../../reliability/lib/raw-http.js';

const JWT_SECRET = 'fuzz-secret-with-enough-length-0123456789';
export const CONSOLE_KEY = 'fuzz-console-key';
const FUZZ_USER = 'fuzz-user';

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/**
 * Stops the server (graceful: in-flight work and buffered writes finish), reopens its LevelDB log from the
 * data directory as the next boot would, and checks it. (A live log is not checked: the checker's passes
 * read at different moments, so a concurrent append looks like a missing record.)
 */
export async function integrityAfterStop(t: TestServer): Promise<IntegrityReport> {
  await t.server.close();
  const log = await openLevelLog(path.join(t.dataDir, 'log'));
  try {
    return await checkLogIntegrity(log);
  } finally {
    await log.close();
  }
}

export interface FuzzTarget {
  t: TestServer;
  world: FuzzWorld;
  token: string;
  envDir: string;
  close(): Promise<void>;
}

export async function startFuzzTarget(): Promise<FuzzTarget> {
  const registry = `http://127.0.0.1:${await closedPort()}/`;
  const envDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-fuzz-env-'));
  const t = await startTestServer(
    {
      agents: [assistantAgent],
      workflows: [echoWorkflow, orderApprovalWorkflow],
      observability: {
        envFile: path.join(envDir, '.env'),
        updates: { registryUrl: registry, npmCommand: path.join(envDir, 'npm-is-disabled-in-the-fuzzer'), timeoutMs: 2_000, installTimeoutMs: 2_000 },
      },
    },
    { env: { ...process.env, NODE_ENV: 'test', JWT_SECRET, SERVICE_CONSOLE_ACCESS_KEY: CONSOLE_KEY, npm_config_registry: registry } },
  );
  const token = await new SignJWT({ sub: FUZZ_USER, role: 'fuzzer' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('2h').sign(new TextEncoder().encode(JWT_SECRET));
  const expired = await new SignJWT({ sub: FUZZ_USER }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt(1).setExpirationTime(2).sign(new TextEncoder().encode(JWT_SECRET));
  const wrongKey = await new SignJWT({ sub: 'mallory' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('another-secret-of-some-length-xxxxxxxx'));
  const auth = { authorization: `Bearer ${token}`, 'x-service-dev': 'true' };
  const post = (p: string, json: unknown) => api(`${t.url}${p}`, { method: 'POST', json, headers: auth });

  // seed data the generators can point at
  const completed = await post('/workflows/echo/execute', { input: { text: 'seed' } });
  const suspended = await Promise.all([1, 2, 3].map((i) => post('/workflows/order-approval/execute', { input: { items: [{ price: 100 + i, qty: 2 }] } })));
  const approved = await post('/workflows/order-approval/execute', { input: { items: [{ price: 5, qty: 1 }] } });
  for (const r of [completed, approved, ...suspended]) if (r.status !== 200) throw new Error(`seeding failed: ${JSON.stringify(r.body)}`);
  const conv = await post('/api/memory/conversations', { userId: FUZZ_USER, resourceId: 'assistant', conversationId: 'fuzz-conv', title: 'Fuzz' });
  if (conv.status !== 201) throw new Error(`seeding failed: ${JSON.stringify(conv.body)}`);
  await post('/api/memory/save-messages', {
    userId: FUZZ_USER,
    conversationId: 'fuzz-conv',
    messages: [
      { id: 'fuzz-m1', role: 'user', content: 'hello' },
      { id: 'fuzz-m2', role: 'assistant', content: 'hi' },
    ],
  });
  await post('/agents/assistant/text', { input: 'what is the weather in Paris?', options: { memory: { userId: FUZZ_USER, conversationId: 'fuzz-conv' } } });
  const traces = await api(`${t.url}/observability/traces?limit=20`, { headers: auth });
  const traceIds: string[] = [];
  const spanIds: string[] = [];
  for (const tr of traces.body?.data?.traces ?? []) {
    traceIds.push(tr.traceId);
    for (const s of tr.spans ?? []) spanIds.push(s.spanId);
  }

  const tracked = new Set(trackedPackages(DEFAULT_PACKAGE_JSON).map((p) => p.name));
  const INVALID_PACKAGE = 'not a package!';
  const executionIds = [completed.body.data.executionId, approved.body.data.executionId, ...suspended.map((r) => r.body.data.executionId)];

  const guard = (route: RouteDef, c: FuzzCase): FuzzCase => {
    const key = `${route.method} ${route.path}`;
    // never install: POST /updates gets an invalid package name whenever its body is an object
    if (key === 'POST /updates') {
      const fix = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? { ...v, packageName: INVALID_PACKAGE } : v);
      const b = c.body;
      if (b.kind === 'json') return { ...c, body: { ...b, value: fix(b.value) } };
      if (b.kind === 'invalid-utf8' || b.kind === 'deep' || b.kind === 'huge-string' || b.kind === 'duplicate-key') return { ...c, body: { ...b, value: fix(b.value) } };
      if (b.kind === 'none') return { ...c, body: { kind: 'json', value: { packageName: INVALID_PACKAGE } } };
      return c;
    }
    if (key === 'POST /updates/:packageName' && tracked.has(c.params.packageName)) return { ...c, params: { ...c.params, packageName: INVALID_PACKAGE } };
    // the echo step waits delayMs (up to 30 s): keep fuzzed executions quick
    const clamp = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(clamp);
      if (v && typeof v === 'object') {
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v))
          Object.defineProperty(out, k, { value: k === 'delayMs' && typeof x === 'number' && x > 20 ? 20 : clamp(x), enumerable: true, writable: true, configurable: true });
        return out;
      }
      return v;
    };
    const b = c.body;
    if ('value' in b) return { ...c, body: { ...b, value: clamp(b.value) } };
    return c;
  };

  // Whatever the generators made of it, a POST /updates body that the server would read as "install all"
  // or as a tracked package is replaced by an invalid name (bodies the server rejects anyway are kept).
  const guardRequest = (route: RouteDef, req: RawRequest): RawRequest => {
    if (route.method !== 'POST' || route.path !== '/updates') return req;
    const text = req.body === undefined ? '' : Buffer.isBuffer(req.body) ? req.body.toString('utf8') : req.body;
    let value: unknown = {};
    try {
      if (text.trim() !== '') value = JSON.parse(text);
    } catch {
      return req; // malformed JSON: 400 before any handler
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) return req; // 400
    const name = (value as { packageName?: unknown }).packageName;
    if (name !== undefined && (typeof name !== 'string' || !tracked.has(name))) return req;
    return { ...req, body: JSON.stringify({ packageName: INVALID_PACKAGE }), chunked: false, headers: { ...req.headers, 'content-type': 'application/json' } };
  };

  const world: FuzzWorld = {
    params: {
      id: ['assistant', 'echo', 'order-approval', 'getWeather'],
      executionId: executionIds,
      conversationId: ['fuzz-conv'],
      name: ['getWeather'],
      traceId: traceIds.slice(0, 5),
      spanId: spanIds.slice(0, 5),
      file: ['swagger-ui.css', 'favicon-32x32.png', '..%2Fpackage.json'],
      packageName: [INVALID_PACKAGE, '@@', '..'],
    },
    seeds: {
      'POST /setup-observability': () => ({ publicKey: 'pk-fuzz', secretKey: 'sk-fuzz' }),
      'POST /updates': () => ({ packageName: INVALID_PACKAGE }),
      'POST /api/memory/conversations': () => ({ userId: FUZZ_USER, resourceId: 'assistant', title: 'fuzzed', metadata: { a: 1 } }),
      'PATCH /api/memory/conversations/:conversationId': () => ({ title: 'renamed', metadata: { b: 2 } }),
      'POST /api/memory/conversations/:conversationId/clone': () => ({ title: 'copy', includeMessages: true }),
      'POST /api/memory/save-messages': () => ({ userId: FUZZ_USER, conversationId: 'fuzz-conv', messages: [{ role: 'user', content: 'fuzz says hi' }] }),
      'POST /api/memory/messages/delete': () => ({ userId: FUZZ_USER, conversationId: 'fuzz-conv', messageIds: ['nope'] }),
      'POST /api/memory/conversations/:conversationId/working-memory': () => ({ content: '- likes: fuzz', mode: 'append', userId: FUZZ_USER }),
      'POST /agents/:id/text': () => ({ input: 'hello', options: { temperature: 0.2, maxSteps: 2, memory: { userId: FUZZ_USER, conversationId: 'fuzz-conv', options: { contextLimit: 3 } } } }),
      'POST /agents/:id/stream': () => ({ input: 'weather in Oslo?', options: { maxOutputTokens: 50 } }),
      'POST /agents/:id/chat': () => ({ input: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }], options: { memory: { userId: FUZZ_USER, conversationId: 'fuzz-chat' } } }),
      'POST /agents/:id/object': () => ({ input: 'a person', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }),
      'POST /agents/:id/stream-object': () => ({ input: 'a person', schema: { type: 'object', properties: { age: { type: 'number' } } } }),
      'POST /tools/:name/execute': () => ({ input: { city: 'Paris' }, context: { k: 'v' } }),
      'POST /workflows/:id/execute': (p) =>
        p.id === 'order-approval' ? { input: { items: [{ price: 3, qty: 2 }] }, options: { metadata: { fuzz: true } } } : { input: { text: 'fuzz', delayMs: 5 }, options: { context: { a: 1 } } },
      'POST /workflows/:id/stream': (p) => (p.id === 'order-approval' ? { input: { items: [{ price: 300, qty: 1 }] } } : { input: { text: 'fuzz' } }),
      'POST /workflows/:id/executions/:executionId/suspend': () => ({ reason: 'fuzz' }),
      'POST /workflows/:id/executions/:executionId/resume': () => ({ resumeData: { approved: true }, options: { stepId: 'approval-gate' } }),
      'POST /workflows/:id/executions/:executionId/replay': () => ({ stepId: 'compute-total', inputData: { items: [] } }),
      'POST /workflows/:id/executions/:executionId/cancel': () => ({ reason: 'fuzz' }),
    },
    authorizations: [`Bearer ${token}`, `Bearer ${expired}`, `Bearer ${wrongKey}`, `Bearer ${token.slice(0, -3)}abc`, `bearer ${token}`],
    guard,
    guardRequest,
  };

  return {
    t,
    world,
    token,
    envDir,
    async close() {
      await t.close();
      rmSync(envDir, { recursive: true, force: true });
    },
  };
}
