/**
 * How a route's result goes on the wire: status line, CORS headers, the route's headers, content type, body (a HEAD
 * answer: the length only). The generic request path (dispatch.ts) and the fast routes (fast-routes.ts) both write
 * through here, so the same result is the same bytes whichever path answered it.
 */
import type { HttpResponse } from 'uWebSockets.js';
import type { RouteResult } from '../contract/routes.js';
import { AppError, toFailure } from '../errors.js';

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  201: '201 Created',
  204: '204 No Content',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  408: '408 Request Timeout',
  409: '409 Conflict',
  413: '413 Payload Too Large',
  414: '414 URI Too Long',
  415: '415 Unsupported Media Type',
  431: '431 Request Header Fields Too Large',
  500: '500 Internal Server Error',
  501: '501 Not Implemented',
  503: '503 Service Unavailable',
  507: '507 Insufficient Storage',
};
export const statusLine = (s: number): string => STATUS_TEXT[s] ?? `${s} Status`;

/** A finished answer: what is left of a route result once it is not a stream. */
export interface Answer {
  status?: number;
  contentType?: string;
  body?: string | Uint8Array;
  headers?: Record<string, string>;
}

export type HeaderList = ReadonlyArray<readonly [string, string]>;

/**
 * The answer a non-stream result stands for. A `body` result is one already (pre-encoded registry answers go out
 * as they are, without a copy); the JSON kinds are encoded here.
 */
export function answerOf(result: Exclude<RouteResult, { kind: 'sse' }>): Answer {
  switch (result.kind) {
    case 'body':
      return result;
    case 'json': {
      const env = result.extra ? { success: true, data: result.data, ...result.extra } : { success: true, data: result.data };
      return { status: result.status ?? 200, contentType: 'application/json', body: JSON.stringify(env), headers: result.headers };
    }
    case 'bare-json':
      return { status: result.status ?? 200, contentType: 'application/json', body: JSON.stringify(result.body) };
    case 'empty':
      return { status: 204 };
  }
}

/** The failure envelope as an answer. */
const failureAnswer = (status: number, body: unknown): Answer => ({ status, contentType: 'application/json', body: JSON.stringify(body) });

/** The answer to a thrown error; an unexpected one (a 5xx that is not an AppError) is reported first. */
export function errorAnswer(err: unknown, report: ((err: unknown) => void) | undefined): Answer {
  const { status, body } = toFailure(err);
  if (status >= 500 && !(err instanceof AppError)) report?.(err);
  return failureAnswer(status, body);
}

/** Writes `answer` (call it corked, or synchronously inside the uWS request handler, which is corked). */
export function writeAnswer(res: HttpResponse, head: boolean, cors: HeaderList, answer: Answer): void {
  const status = answer.status ?? 200;
  // uWS writes `200 OK` itself when no status was written
  if (status !== 200) res.writeStatus(statusLine(status));
  for (let i = 0; i < cors.length; i++) res.writeHeader(cors[i][0], cors[i][1]);
  if (answer.headers) for (const k in answer.headers) res.writeHeader(k, answer.headers[k]);
  if (answer.contentType) res.writeHeader('Content-Type', answer.contentType);
  const body = answer.body;
  if (body === undefined) res.endWithoutBody(0);
  // a HEAD answer announces the length but carries no content (a body would be read as the next response)
  // (endWithoutBody(n) of this uWS build waits for n bytes, so the header is written by hand)
  else if (head) res.writeHeader('Content-Length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength)).endWithoutBody();
  else res.end(body);
}
