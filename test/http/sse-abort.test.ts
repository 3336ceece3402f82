/**
 * A stream's abort on the real uWS edge: once the sink owns the response (the request's own abort
 * handler and context released), a handler that takes `ctx.signal` only then (inside its stream)
 * still sees it abort when the client goes away; a handler that took it before keeps the request's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpEdge, listen, type RunningServer } from '../../src/http/server.js';
import type { RequestContext, RouteDef, SseSink } from '../../src/contract/routes.js';
import { encodeSseFrame } from '../../src/kernel/sse-encoder.js';
import { readSse } from '../helpers/sse.js';
import { until } from '../helpers/until.js';

const aborted = new Map<string, boolean>();

function streamRoute(path: string, takeSignalFirst: boolean): RouteDef {
  return {
    method: 'GET',
    path,
    auth: 'custom',
    summary: path,
    tags: [],
    handler: (ctx: RequestContext) => {
      const early = takeSignalFirst ? ctx.signal : undefined;
      return {
        kind: 'sse',
        start: async (sink: SseSink) => {
          sink.send(encodeSseFrame('hello', 1, {}));
          await new Promise((r) => setImmediate(r));
          const signal = early ?? ctx.signal;
          aborted.set(path, signal.aborted);
          signal.addEventListener('abort', () => aborted.set(path, true));
        },
      };
    },
  };
}

let server: RunningServer;
let base: string;

beforeAll(async () => {
  const edge = new HttpEdge({ routes: [streamRoute('/late', false), streamRoute('/early', true)] });
  server = await listen(edge, '127.0.0.1', 0);
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(() => {
  server.close();
});

describe('a stream whose client goes away', () => {
  for (const path of ['/late', '/early'])
    it(`aborts the request's signal taken ${path === '/late' ? 'inside the stream, after the sink owns the response' : 'before the stream started'}`, async () => {
      const controller = new AbortController();
      const res = await fetch(`${base}${path}`, { signal: controller.signal });
      for await (const f of readSse(res)) if (f.event === 'hello') break;
      await until(() => aborted.has(path), 'the stream to take its signal');
      expect(aborted.get(path)).toBe(false);
      controller.abort();
      await until(() => aborted.get(path) === true, 'the signal to abort');
    });
});
