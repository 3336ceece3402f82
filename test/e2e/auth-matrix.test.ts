/**
 * The protection matrix on the real server, generated from its route table: every route × every auth
 * mode × every kind of token gets what the spec oracle (src/http/auth/matrix.ts) says. A built-in route
 * the spec does not classify must be listed here, so adding a route without a decision fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MATRIX_MODES, MATRIX_TOKEN_KINDS, expectedStatusFor, matrixAuthConfig, matrixProcessEnv, mintMatrixToken, specAuthClass, type MatrixMode } from '../../src/http/auth/matrix.js';
import type { AuthClass } from '../../src/contract/routes.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** built-in routes the first contract did not list, with the class they are meant to have */
const ADDITIONS: Record<string, AuthClass> = {
  'GET /ui/assets/:file': 'documentation',
  'GET /console': 'documentation',
  'GET /console/assets/:file': 'documentation',
  // answering a tool approval continues an agent run: the same class as the generation routes
  'POST /agents/:id/runs/:runId/approvals/:approvalId': 'execution',
  // the frames of a resumable chat stream read like the stream itself
  'GET /agents/:id/chat/:conversationId/frames': 'execution',
  // one run of an agent reads like its history
  'GET /agents/:id/runs/:runId': 'management',
  // an event continues the executions waiting for it: the class of execute
  'POST /events': 'execution',
  'POST /workflows/:id/executions/:executionId/events': 'execution',
  // schedules: the list reads like GET /workflows; pause, resume and trigger change what runs, like execute
  'GET /schedules': 'management',
  'POST /schedules/:id/pause': 'execution',
  'POST /schedules/:id/resume': 'execution',
  'POST /schedules/:id/trigger': 'execution',
};

const concrete = (path: string) => path.replace(/:[A-Za-z0-9_]+/g, 'matrix-x');
/** a body that every route rejects before doing anything lasting (no install, no write) */
const HARMLESS_BODY = JSON.stringify({ packageName: '!not a package!' });

const servers = new Map<MatrixMode, TestServer>();

beforeAll(async () => {
  for (const mode of MATRIX_MODES) {
    const auth = matrixAuthConfig(mode);
    // the update check must not reach the real registry: a closed local port fails at once
    const env = { ...matrixProcessEnv({}), npm_config_registry: 'http://127.0.0.1:9/' } as NodeJS.ProcessEnv;
    servers.set(mode, await startTestServer(auth ? { auth } : {}, { env }));
  }
});

afterAll(async () => {
  for (const s of servers.values()) await s.close();
});

describe('route table auth decisions', () => {
  it('gives every built-in route a decision the spec or this list accounts for', () => {
    const s = servers.get('no-auth')!;
    const missing: string[] = [];
    for (const r of s.server.routes) {
      if (r.custom) continue;
      const key = `${r.method} ${r.path}`;
      const expected = specAuthClass(r.method, r.path) ?? ADDITIONS[key];
      if (expected === undefined) missing.push(`${key} (no decision)`);
      else if (expected !== r.auth) missing.push(`${key} is '${r.auth}', spec says '${expected}'`);
    }
    expect(missing).toEqual([]);
  });
});

describe.each(MATRIX_MODES)('HTTP routes with auth mode %s', (mode) => {
  it('answers every route and token kind as the protection matrix says', { timeout: 120_000 }, async () => {
    const s = servers.get(mode)!;
    const now = Date.now();
    const mismatches: string[] = [];
    for (const route of s.server.routes) {
      for (const kind of MATRIX_TOKEN_KINDS) {
        const token = mintMatrixToken(kind, now);
        const expected = expectedStatusFor({ method: route.method, path: route.path, auth: route.auth }, mode, kind);
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (token) headers.authorization = `Bearer ${token}`;
        const res = await fetch(`${s.url}${concrete(route.path)}`, { method: route.method, headers, body: route.method === 'GET' ? undefined : HARMLESS_BODY });
        const text = await res.text();
        if (!expected.allowed) {
          let error: string | undefined;
          try {
            error = JSON.parse(text).error;
          } catch {
            error = text.slice(0, 80);
          }
          if (res.status !== 401 || error !== expected.error) mismatches.push(`${route.method} ${route.path} [${kind}] → ${res.status} ${error}, expected 401 ${expected.error}`);
        } else if (res.status === 401) {
          mismatches.push(`${route.method} ${route.path} [${kind}] → 401 ${text.slice(0, 80)}, expected to pass`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('checks WebSocket handshakes on /ws with ?token= by the same rules', async () => {
    const s = servers.get(mode)!;
    for (const kind of MATRIX_TOKEN_KINDS) {
      const token = mintMatrixToken(kind, Date.now());
      const expected = expectedStatusFor({ method: 'WS', path: '/ws', auth: 'management' }, mode, kind);
      const url = `${s.url.replace('http', 'ws')}/ws${token ? `?token=${encodeURIComponent(token)}` : ''}`;
      const outcome = await new Promise<{ status: number; first?: any }>((resolve) => {
        const ws = new WebSocket(url);
        ws.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0 }));
        ws.on('message', (m) => {
          resolve({ status: 101, first: JSON.parse(m.toString()) });
          ws.close();
        });
        ws.on('error', () => undefined);
      });
      if (expected.allowed) {
        expect(outcome.status, `${mode}/${kind}`).toBe(101);
        expect(outcome.first.data.authenticated, `${mode}/${kind}`).toBe(expected.user);
      } else {
        expect(outcome.status, `${mode}/${kind}`).toBe(401);
      }
    }
  });
});
