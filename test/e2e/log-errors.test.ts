/**
 * Errors in the server's log lines are `{type, message, stack}`: a route failing with a DOMException (an aborted
 * fetch) or a fetch failure writes one error line without the exception's code constants, the transport's cause
 * kept in the message, whichever logger the server was handed.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { startLocalServer, type LocalServer } from '../observability/helpers.js';

describe('errors in the server log', () => {
  let t: TestServer;
  let hanging: LocalServer;
  let goneUrl: string;
  const lines: Array<Record<string, any>> = [];
  beforeAll(async () => {
    hanging = await startLocalServer(() => undefined);
    const gone = await startLocalServer(() => undefined);
    await gone.close();
    goneUrl = gone.url;
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    t = await startTestServer(
      {
        routes: [
          { method: 'GET', path: '/custom/timeout', handler: async () => (await fetch(hanging.url, { signal: AbortSignal.timeout(50) })).status },
          { method: 'GET', path: '/custom/refused', handler: async () => (await fetch(goneUrl)).status },
        ],
      },
      { logger },
    );
  });
  afterAll(async () => {
    await t.close();
    await hanging.close();
  });

  const failureOf = (path: string) => lines.filter((l) => l.level === 50 && l.path === path);

  it('writes a timed-out fetch as its type, message and stack only', async () => {
    expect((await api(`${t.url}/custom/timeout`)).status).toBe(500);
    const [line] = failureOf('/custom/timeout');
    expect(Object.keys(line.err).sort()).toEqual(['message', 'stack', 'type']);
    expect(line.err.type).toBe('TimeoutError');
    expect(JSON.stringify(lines)).not.toContain('INDEX_SIZE_ERR');
  });

  it('names the refused connection in the message of a failed fetch', async () => {
    expect((await api(`${t.url}/custom/refused`)).status).toBe(500);
    const [line] = failureOf('/custom/refused');
    expect(line.err).toEqual({ type: 'TypeError', message: expect.stringMatching(/^fetch failed; cause: .*ECONNREFUSED/), stack: expect.any(String) });
  });
});
