/**
 * What the edge reads from a uWS request, and the checks of its query and body against a route's schemas; shared
 * by HTTP dispatch and the WebSocket handshake. uWS's request object is valid only inside its callback, so
 * everything is copied out synchronously.
 */
import type { HttpRequest } from 'uWebSockets.js';
import type { ZodType } from 'zod';
import { AppError, formatIssues } from '../errors.js';

export interface RawRequest {
  method: string;
  url: string;
  path: string;
  rawQuery: string;
  headers: Record<string, string>;
}

export function readRequest(req: HttpRequest): RawRequest {
  const headers: Record<string, string> = {};
  req.forEach((k, v) => {
    headers[k] = v;
  });
  const url = req.getUrl();
  return { method: req.getCaseSensitiveMethod().toUpperCase(), url, path: url, rawQuery: req.getQuery() ?? '', headers };
}

/** The query as an object; a repeated key keeps its first value. */
export function parseQueryObject(params: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of params) if (!(k in out)) out[k] = v;
  return out;
}

/** `value` as `schema` parses it, or a 400 naming the field under `root`. */
export function validate(schema: ZodType | undefined, value: unknown, root: string): unknown {
  if (!schema) return value;
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new AppError('INVALID_REQUEST', `Invalid request: ${formatIssues(r.error.issues, root)}`);
}
