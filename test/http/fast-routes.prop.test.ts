/**
 * The fast routes answer exactly what the generic path answers: for the real route table (agents, workflows, tools,
 * documentation), under several auth and CORS configurations, any request (path, query, method, Origin,
 * Authorization, `Host`, extra headers near the limits) gets the same status, the same headers in the same order and the
 * same body from an edge with fast routes as from one without. Both edges serve the same route objects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { EventloomConfig } from '../../src/config/define-config.js';
import type { RequestContext, RouteDef } from '../../src/contract/routes.js';
import { createAuthenticator, resolveAuthConfig, type AuthConfig } from '../../src/http/auth/index.js';
import { MATRIX_AUDIENCE, MATRIX_ISSUER, MATRIX_SECRET, mintMatrixToken } from '../../src/http/auth/matrix.js';
import { HttpEdge, listen, type RunningServer } from '../../src/http/server.js';
import { assistantAgent } from '../../examples/agents/assistant.js';
import { echoWorkflow, orderApprovalWorkflow } from '../../examples/workflows/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { rawExchange, requestHead } from '../helpers/raw-exchange.js';

const jwt = (extra: Partial<AuthConfig> = {}): AuthConfig => ({ secret: MATRIX_SECRET, verifyOptions: { algorithms: ['HS256'], audience: MATRIX_AUDIENCE, issuer: MATRIX_ISSUER }, ...extra });

const CONFIGS: Array<{ name: string; config: EventloomConfig }> = [
  { name: 'no auth, default CORS', config: {} },
  { name: 'JWT auth, CORS for a list of origins with credentials', config: { auth: jwt(), cors: { origin: ['https://app.example'], credentials: true, exposeHeaders: ['x-conversation-id'] } } },
  {
    name: 'JWT auth private by default with public and protected patterns, CORS off',
    config: { auth: jwt({ defaultPrivate: true, publicRoutes: ['GET /agents/:id', 'GET /workflows'], protectedRoutes: ['GET /tools'] }), cors: false },
  },
  { name: 'no auth, CORS origin decided by a function', config: { cors: { origin: (o: string) => (o.endsWith('.example') ? o : undefined) } } },
  { name: 'no auth, allowed hosts added to the loopback ones', config: { server: { allowedHosts: ['api.example.com', '.corp.example'] } } },
];

const PATHS = [
  '/agents',
  '/agents/assistant',
  '/agents/%61ssistant',
  '/agents/nobody',
  '/agents/%zz',
  '/agents/',
  '/agents/assistant/',
  '//agents',
  '/agents/assistant/card',
  '/agents/nobody/card',
  '/.well-known/assistant/agent-card.json',
  '/.well-known/nobody/agent-card.json',
  '/workflows',
  '/workflows/echo',
  '/workflows/order-approval',
  '/workflows/executions',
  '/workflows/nope',
  '/tools',
  '/tools/',
  '/doc',
  '/nope',
];
const now = Date.now();
const TOKENS = [undefined, `Bearer ${mintMatrixToken('valid', now)}`, `Bearer ${mintMatrixToken('expired', now)}`, 'Bearer garbage', 'Basic abc'];

const request = fc.record({
  method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD'),
  path: fc.constantFrom(...PATHS),
  query: fc.constantFrom('', '?x=1', '?limit=abc&limit=2', '?', `?q=${'a'.repeat(8200)}`),
  host: fc.constantFrom('127.0.0.1', '127.0.0.1', 'localhost:3141', '[::1]:80', 'LOCALHOST.', 'evil.example', 'evil.example:3141', 'api.example.com', 'a.corp.example:8080', '', 'x:y'),
  origin: fc.constantFrom(undefined, 'https://evil.example', 'https://app.example', 'http://127.0.0.1', 'null', 'https://other.test'),
  authorization: fc.constantFrom(...TOKENS),
  extra: fc.constantFrom<Array<[string, string]>>(
    [],
    [['Content-Length', '0']],
    [
      ['Accept-Encoding', 'gzip, br'],
      ['If-None-Match', '"x"'],
    ],
    [['X-Mid', 'm'.repeat(6000)]],
    [['X-Big', 'b'.repeat(17_000)]],
    [
      ['Origin', 'https://evil.example'],
      ['Origin', 'https://app.example'],
    ],
    [['Host', 'evil.example']],
    [['Host', 'localhost']],
  ),
});

interface Pair {
  test: TestServer;
  fast: RunningServer;
  generic: RunningServer;
  /** requests each edge's pathOnly handlers saw on the fast path (a context holding params only) */
  fastHits: { fast: number; generic: number };
}

const pairs = new Map<string, Pair>();

/** Wraps each pathOnly handler to count the contexts without headers, i.e. the answers the fast path gave. */
function counting(routes: readonly RouteDef[], hits: { count: number }): RouteDef[] {
  const isFast = (ctx: RequestContext) => {
    try {
      void ctx.headers;
      return false;
    } catch {
      return true;
    }
  };
  return routes.map((r) => (r.pathOnly ? { ...r, handler: (ctx: RequestContext) => (isFast(ctx) && hits.count++, r.handler(ctx)) } : r));
}

beforeAll(async () => {
  for (const { name, config } of CONFIGS) {
    const env = { NODE_ENV: 'development', JWT_SECRET: undefined };
    const test = await startTestServer({ ...config, agents: [assistantAgent], workflows: [echoWorkflow, orderApprovalWorkflow] }, { env });
    const authenticate = createAuthenticator(await resolveAuthConfig(config.auth as AuthConfig | undefined, env), env);
    const edge = async (fastRoutes: boolean, hits: { count: number }) =>
      listen(new HttpEdge({ routes: counting(test.server.routes, hits), cors: config.cors, authenticate, fastRoutes, allowedHosts: config.server?.allowedHosts }), '127.0.0.1', 0);
    const fastHits = { count: 0 };
    const genericHits = { count: 0 };
    const pair: Pair = {
      test,
      fast: await edge(true, fastHits),
      generic: await edge(false, genericHits),
      get fastHits() {
        return { fast: fastHits.count, generic: genericHits.count };
      },
    };
    pairs.set(name, pair);
  }
});

afterAll(async () => {
  for (const p of pairs.values()) {
    p.fast.close();
    p.generic.close();
    await p.test.close();
  }
});

describe.each(CONFIGS.map((c) => c.name))('fast routes with %s', (name) => {
  it('answer every request with the same status, headers and body as the generic path', { timeout: 120_000 }, async () => {
    const pair = pairs.get(name)!;
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers: Array<[string, string]> = [];
        if (r.origin) headers.push(['Origin', r.origin]);
        if (r.authorization) headers.push(['Authorization', r.authorization]);
        headers.push(...r.extra);
        const text = requestHead(r.method, r.path + r.query, headers, r.host);
        const head = r.method === 'HEAD';
        const [a, b] = await Promise.all([rawExchange(pair.fast.port, text, { head }), rawExchange(pair.generic.port, text, { head })]);
        expect({ status: a.status, head: a.head, body: a.body.toString('latin1') }).toEqual({ status: b.status, head: b.head, body: b.body.toString('latin1') });
      }),
      { numRuns: 200 },
    );
    // the comparison means something only if the fast path answered a good share of them
    expect(pair.fastHits.generic).toBe(0);
    expect(pair.fastHits.fast).toBeGreaterThan(0);
  });
});
