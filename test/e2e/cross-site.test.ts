/**
 * Cross-site requests against the real server. A web page can send `text/plain`, form and multipart bodies to any
 * origin without a CORS preflight, so a body that does not declare JSON is refused (415) on every route that reads
 * one; and the host-changing routes (POST /updates, /updates/:packageName, /setup-observability) refuse a browser
 * request from any origin other than the server's own or one named in `cors.origin` (403), in every auth mode.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { send, type RawRequest } from '../reliability/lib/raw-http.js';
import { fakeProject, startFakeRegistry, type FakeProject, type LocalServer } from '../observability/helpers.js';
import { assistantAgent } from '../../examples/agents/assistant.js';
import { isJsonMediaType } from '../../src/http/server.js';
import { MATRIX_SECRET, matrixCredentials } from '../../src/http/auth/index.js';

const EVIL = 'https://evil.example';
const json = (r: { body: Buffer }) => JSON.parse(r.body.toString('utf8'));
const tmpDirs: string[] = [];
const tmpDir = (prefix: string) => {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  tmpDirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of tmpDirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('request bodies that do not declare JSON', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ agents: [assistantAgent], routes: [{ method: 'POST', path: '/ops/echo', handler: ({ body }) => ({ body }) }] });
  });
  afterAll(() => t.close());

  it('are refused with 415 before an agent runs, as a cross-site text/plain post would be', async () => {
    const r = await send(t.url, {
      method: 'POST',
      path: '/agents/assistant/text',
      headers: { 'content-type': 'text/plain', origin: EVIL },
      body: JSON.stringify({ input: 'hello' }),
    });
    expect(r.status).toBe(415);
    expect(json(r)).toEqual({ success: false, error: "Unsupported Content-Type 'text/plain': request bodies must be application/json" });
  });

  it('are refused for every type a page can send without a preflight, and without any content type', async () => {
    const body = JSON.stringify({ input: 'hello' });
    for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=xyz', 'application/octet-stream', 'text/json', undefined]) {
      const headers: Record<string, string> = type === undefined ? {} : { 'content-type': type };
      const r = await send(t.url, { method: 'POST', path: '/agents/assistant/text', headers, body });
      expect(r.status, String(type)).toBe(415);
      expect(json(r).error).toBe(`Unsupported Content-Type '${type ?? ''}': request bodies must be application/json`);
    }
    // chunked bodies too
    const chunked = await send(t.url, { method: 'POST', path: '/agents/assistant/text', headers: { 'content-type': 'text/plain' }, body, chunked: true });
    expect(chunked.status).toBe(415);
  });

  it('accepts application/json with parameters, in any case, and +json types', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/vnd.api+json', 'application/merge-patch+json']) {
      const r = await send(t.url, { method: 'POST', path: '/agents/assistant/text', headers: { 'content-type': type }, body: JSON.stringify({ input: 'hello' }) });
      expect(r.status, type).toBe(200);
      expect(json(r).data.text).toEqual(expect.any(String));
    }
  });

  it('reaches JSON parsing on every route of the table that reads a body when the client declares JSON, and is 415 otherwise', async () => {
    // `[]` is JSON but not an object: a route that got past the media-type check answers the 400 of the body
    // parser, before auth and before its handler, so nothing runs and nothing is installed
    const bodyRoutes = t.server.routes.filter((r) => r.method !== 'GET');
    expect(bodyRoutes.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(['POST /agents/:id/text', 'POST /updates', 'POST /setup-observability', 'DELETE /api/memory/conversations/:conversationId', 'POST /ops/echo']),
    );
    for (const route of bodyRoutes) {
      const p = route.path.replace(/:[A-Za-z]+/g, 'x');
      const legit = await send(t.url, { method: route.method, path: p, headers: { 'content-type': 'application/json' }, body: '[]' });
      expect([route.method, p, legit.status, json(legit).error]).toEqual([route.method, p, 400, 'Invalid request: body: must be a JSON object']);
      const plain = await send(t.url, { method: route.method, path: p, headers: { 'content-type': 'text/plain' }, body: '[]' });
      expect([route.method, p, plain.status]).toEqual([route.method, p, 415]);
    }
  });

  it('serves operator routes and body-less posts as before', async () => {
    expect(await api(`${t.url}/ops/echo`, { method: 'POST', json: { a: 1 } })).toMatchObject({ status: 200, body: { success: true, data: { body: { a: 1 } } } });
    // an empty body is no body, whatever it is labelled
    const empty = await send(t.url, { method: 'POST', path: '/ops/echo', headers: { 'content-type': 'text/plain' }, body: '' });
    expect([empty.status, json(empty)]).toEqual([200, { success: true, data: { body: {} } }]);
    const none = await send(t.url, { method: 'POST', path: '/ops/echo' });
    expect(none.status).toBe(200);
  });

  it('leaves routes that take no body alone, even when a body of another type comes with the request', async () => {
    const r = await send(t.url, { method: 'GET', path: '/agents', headers: { 'content-type': 'text/plain', origin: EVIL }, body: 'ignored' });
    expect(r.status).toBe(200);
    expect(json(r).data.map((a: { id: string }) => a.id)).toContain('assistant');
  });

  it('classifies media types by type and subtype only', () => {
    expect(isJsonMediaType('application/json')).toBe(true);
    expect(isJsonMediaType(' application/problem+json ; charset=utf-8')).toBe(true);
    expect(isJsonMediaType('application/jsonp')).toBe(false);
    expect(isJsonMediaType('application/+json')).toBe(false);
    expect(isJsonMediaType('text/plain; x=application/json')).toBe(false);
    expect(isJsonMediaType('')).toBe(false);
    expect(isJsonMediaType(undefined)).toBe(false);
  });
});

describe('host-changing routes called from a web page', () => {
  let registry: LocalServer;
  beforeAll(async () => {
    registry = await startFakeRegistry({ pino: '10.9.0' });
  });
  afterAll(() => registry.close());

  async function hostServer(opts: { env?: Record<string, string | undefined>; cors?: { origin: string[] }; auth?: boolean } = {}) {
    const project: FakeProject = fakeProject({ deps: { pino: '^10.4.0' }, installed: { pino: '10.4.0' } });
    tmpDirs.push(project.dir);
    const envFile = path.join(tmpDir('eventloom-env-'), '.env');
    const t = await startTestServer(
      {
        observability: { envFile, updates: { packageJson: project.packageJson, registryUrl: registry.url, npmCommand: project.npm } },
        ...(opts.cors ? { cors: opts.cors } : {}),
        ...(opts.auth ? { auth: { secret: MATRIX_SECRET } } : {}),
      },
      { env: { ...process.env, NODE_ENV: 'test', ...opts.env } },
    );
    const port = new URL(t.url).port;
    const calls: Array<[string, RawRequest]> = [
      ['setup', { method: 'POST', path: '/setup-observability', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ publicKey: 'pk', secretKey: 'sk' }) }],
      ['update one', { method: 'POST', path: '/updates/pino', headers: {} }],
      ['update all', { method: 'POST', path: '/updates', headers: { 'content-type': 'application/json' }, body: '{}' }],
    ];
    const callAll = async (headers: Record<string, string>) => {
      const out: Record<string, { status: number; error?: string }> = {};
      for (const [name, req] of calls) {
        const r = await send(t.url, { ...req, headers: { ...req.headers, ...headers } });
        out[name] = { status: r.status, error: json(r).error };
      }
      return out;
    };
    return { t, project, envFile, port, callAll };
  }

  const refused = (origin: string) => ({
    setup: {
      status: 403,
      error: `Cross-origin request refused: origin '${origin}' may not call POST /setup-observability; it changes the host and only accepts the server's own origin or one named in cors.origin`,
    },
    'update one': {
      status: 403,
      error: `Cross-origin request refused: origin '${origin}' may not call POST /updates/pino; it changes the host and only accepts the server's own origin or one named in cors.origin`,
    },
    'update all': {
      status: 403,
      error: `Cross-origin request refused: origin '${origin}' may not call POST /updates; it changes the host and only accepts the server's own origin or one named in cors.origin`,
    },
  });
  const served = { setup: { status: 200 }, 'update one': { status: 200 }, 'update all': { status: 200 } };

  it('refuses a foreign origin with 403 without auth, and nothing is written or installed', async () => {
    const s = await hostServer();
    try {
      for (const origin of [EVIL, 'null', `http://localhost.evil.example:${s.port}`, `http://127.0.0.1:${Number(s.port) + 1}`]) {
        expect(await s.callAll({ origin })).toEqual(refused(origin));
      }
      expect(existsSync(s.envFile)).toBe(false);
      expect(s.project.calls()).toEqual([]);
    } finally {
      await s.t.close();
    }
  });

  it("serves the server's own origin and clients that send no Origin", async () => {
    const s = await hostServer();
    try {
      expect(await s.callAll({ origin: `http://127.0.0.1:${s.port}` })).toMatchObject(served);
      expect(await s.callAll({})).toMatchObject(served);
      expect(readFileSync(s.envFile, 'utf8')).toBe('SERVICE_PUBLIC_KEY=pk\nSERVICE_SECRET_KEY=sk\n');
      expect(s.project.calls()).toContainEqual(['install', 'pino@latest']);
    } finally {
      await s.t.close();
    }
  });

  it('serves an origin named in cors.origin, and does not read the default * as naming anyone', async () => {
    const named = await hostServer({ cors: { origin: ['https://console.example'] } });
    try {
      expect(await named.callAll({ origin: 'https://console.example' })).toMatchObject(served);
      expect(await named.callAll({ origin: EVIL })).toEqual(refused(EVIL));
    } finally {
      await named.t.close();
    }
  });

  it('does not trust X-Forwarded-Host to make a foreign origin look like its own', async () => {
    const s = await hostServer();
    try {
      expect(await s.callAll({ origin: EVIL, 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' })).toEqual(refused(EVIL));
    } finally {
      await s.t.close();
    }
  });

  it('refuses a foreign origin with JWT auth on and with a valid token', async () => {
    const s = await hostServer({ auth: true });
    try {
      const { headers } = matrixCredentials('valid');
      expect(await s.callAll({ origin: EVIL, ...headers })).toEqual(refused(EVIL));
      expect(s.project.calls()).toEqual([]);
    } finally {
      await s.t.close();
    }
  });

  it('refuses a foreign origin in production even with the console key', async () => {
    const s = await hostServer({ env: { NODE_ENV: 'production', SERVICE_CONSOLE_ACCESS_KEY: 'prod-key' } });
    try {
      expect(await s.callAll({ origin: EVIL, 'x-console-access-key': 'prod-key' })).toEqual(refused(EVIL));
      expect(existsSync(s.envFile)).toBe(false);
      expect(await s.callAll({ origin: `http://127.0.0.1:${s.port}`, 'x-console-access-key': 'prod-key' })).toMatchObject(served);
    } finally {
      await s.t.close();
    }
  });
});
