/**
 * Route fuzzer: fast-check drives real HTTP requests at the real server for every route of its route
 * table (iterated from `server.routes`, so new routes are covered without touching this file): odd
 * path parameters, query strings, headers and bodies (wrong types, missing fields, huge strings, deep
 * nesting, invalid UTF-8, duplicate keys, wrong content types, oversized and chunked bodies). Every
 * answer must be a well-formed envelope with a 4xx or the route's own success (never a 5xx outside the
 * documented ones, a hang past the per-request time-out, or a crash); afterwards the server still
 * works, the event log passes its integrity check and no body reached Object.prototype.
 *
 * `npm test` sends a few hundred requests; `npm run fuzz` (FUZZ_RUNS=20000) the long run.
 * FUZZ_SEED=<n> replays a run; a failure prints the request that caused it.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { RouteDef } from '../../src/contract/routes.js';
import { HangError, send, type RawRequest } from '../reliability/lib/raw-http.js';
import { api } from '../helpers/server.js';
import { collectSse } from '../helpers/sse.js';
import { caseArb, describeCase, hostileCases, oddString, pct, toRawRequest, type FuzzCase } from './lib/generators.js';
import { checkResponse } from './lib/check-response.js';
import { integrityAfterStop, startFuzzTarget } from './lib/fuzz-server.js';

const TOTAL_RUNS = Number(process.env.FUZZ_RUNS ?? 400);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const REQUEST_TIMEOUT_MS = 10_000;
const SSE_WINDOW_MS = 300;
const MAX_BODY_BYTES = 1024 * 1024;

const protoKeysBefore = Object.getOwnPropertyNames(Object.prototype).sort();
const target = await startFuzzTarget();
const { t, world } = target;
const routes = t.server.routes;
const perRoute = Math.max(4, Math.ceil(TOTAL_RUNS / routes.length));
const documented5xx = new Map<string, number>();
let sent = 0;

afterAll(async () => {
  if (documented5xx.size > 0) console.info(`fuzz: ${sent} requests; documented 5xx seen:\n${[...documented5xx].map(([k, n]) => `  ${n}× ${k}`).join('\n')}`);
  await target.close();
});

async function sendChecked(route: RouteDef, req: RawRequest): Promise<void> {
  sent++;
  let res;
  try {
    res = await send(t.url, req, { timeoutMs: REQUEST_TIMEOUT_MS, sseWindowMs: SSE_WINDOW_MS });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // a body over the limit may be cut short: the server answers (413, or a GET's answer) and stops reading
    if ((code === 'ECONNRESET' || code === 'EPIPE') && req.body !== undefined && req.body.length > MAX_BODY_BYTES) return;
    const what = err instanceof HangError ? 'hang' : `connection error ${code ?? (err as Error).message}`;
    throw new Error(`${what} on ${route.method} ${route.path}\n${describeCase(req)}`);
  }
  const verdict = checkResponse(route, res);
  if (verdict.documented5xx) documented5xx.set(verdict.documented5xx, (documented5xx.get(verdict.documented5xx) ?? 0) + 1);
  if (verdict.documented5xx && process.env.FUZZ_DEBUG) console.info(verdict.documented5xx, describeCase(req));
  if (verdict.problem) throw new Error(`${verdict.problem}\non ${route.method} ${route.path}\n${describeCase(req)}`);
}

/** A generated case as the bytes to send, after the target's guards (no installs, no slow steps). */
function render(route: RouteDef, generated: FuzzCase): RawRequest {
  const req = toRawRequest(route, world.guard ? world.guard(route, generated) : generated);
  return world.guardRequest ? world.guardRequest(route, req) : req;
}

/** The server answers a plain request promptly. */
async function probe(): Promise<void> {
  const started = Date.now();
  const r = await send(t.url, { method: 'GET', path: '/workflows' }, { timeoutMs: 5_000 });
  expect(r.status).toBe(200);
  expect(Date.now() - started).toBeLessThan(5_000);
}

const params = (n: number) => ({ numRuns: n, seed: SEED, endOnFailure: true });

describe('every route of the route table under fuzzed requests', () => {
  for (const route of routes) {
    it(
      `${route.method} ${route.path} answers every fuzzed request with an envelope and a 4xx or its success status, never a 5xx, a hang or a crash`,
      async () => {
        await fc.assert(
          fc.asyncProperty(caseArb(route, world), async (generated) => {
            await sendChecked(route, render(route, generated));
          }),
          params(perRoute),
        );
        await probe();
      },
      Math.max(60_000, perRoute * 3_000),
    );
  }
});

describe('every route of the route table under a sweep of known-hostile inputs', () => {
  for (const route of routes) {
    it(`${route.method} ${route.path} answers hostile path parameters, query values and bodies with an envelope and a 4xx or its success status`, async () => {
      for (const generated of hostileCases(route, world)) {
        await sendChecked(route, render(route, generated));
      }
      await probe();
    }, 120_000);
  }
});

describe('requests outside the route table', () => {
  it('answers unknown paths and methods with the 404 envelope (or a matching route answer), never a 5xx', async () => {
    const segment = fc.oneof(oddString.map(pct), fc.constantFrom('agents', 'workflows', 'api', 'memory', 'executions', 'ws', 'ui', '..', '%2e%2e', ''));
    // (CONNECT is left out: Node's client turns it into a tunnel request that uWS leaves to its idle time-out)
    const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'FOO', 'TRACE');
    await fc.assert(
      fc.asyncProperty(method, fc.array(segment, { minLength: 1, maxLength: 5 }), async (m, segs) => {
        const path = `/${segs.join('/')}`;
        sent++;
        let res;
        try {
          res = await send(t.url, { method: m, path, headers: { authorization: world.authorizations[0] } }, { timeoutMs: REQUEST_TIMEOUT_MS, sseWindowMs: SSE_WINDOW_MS });
        } catch (err) {
          // a method Node or uWS refuses at the protocol level may reset the socket; the server must stay up (probed below)
          if (m === 'FOO') return;
          throw new Error(`${(err as Error).message} on ${m} ${path}`);
        }
        expect(res.status, `${m} ${path}`).toBeLessThan(500);
        if (m === 'HEAD') expect(res.body.length, `HEAD ${path} carries no content`).toBe(0);
        else if (res.status >= 400) {
          const body = JSON.parse(res.body.toString('utf8'));
          expect(body).toMatchObject({ success: false, error: expect.any(String) });
        }
      }),
      params(Math.max(20, Math.ceil(TOTAL_RUNS / 10))),
    );
    await probe();
  }, 120_000);
});

describe('after the fuzzing', () => {
  it('still executes a workflow, streams it and runs an agent normally', async () => {
    const auth = { authorization: world.authorizations[0] };
    const exec = await api(`${t.url}/workflows/echo/execute`, { method: 'POST', json: { input: { text: 'after' } }, headers: auth });
    expect(exec).toMatchObject({ status: 200, body: { success: true, data: { status: 'completed', result: { text: 'after' } } } });
    const stream = await collectSse(`${t.url}/workflows/echo/stream`, { method: 'POST', json: { input: { text: 'streamed' } }, headers: auth });
    expect(stream.frames.map((f) => f.event)).toEqual(['workflow-start', 'step-start', 'step-complete', 'workflow-complete', 'workflow-result']);
    const text = await api(`${t.url}/agents/assistant/text`, { method: 'POST', json: { input: 'hello again' }, headers: auth });
    expect(text.status).toBe(200);
    expect(text.body.data.text).toEqual(expect.any(String));
  });

  it('never let a request body add keys to Object.prototype', () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoKeysBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('leaves an event log that passes the integrity check when reopened after a stop', async () => {
    const report = await integrityAfterStop(t);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.records).toBeGreaterThan(0);
  });
});
