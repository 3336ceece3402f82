/**
 * The limits a request meets before any route code runs, and the reading of its body under them: URL length
 * (414), header block size (431), body size (413) and the time to send it (408), UTF-8 (400), the JSON media
 * type (415) and nesting depth (400). WebSocket messages share the decoder and the depth limit (ws-upgrade.ts).
 */
import type { HttpResponse } from 'uWebSockets.js';
import { AppError } from '../errors.js';
import { checkHeaderSize } from './auth/header-limit.js';
import type { RawRequest } from './raw-request.js';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const BODY_TIMEOUT_MS = 30_000;
export const MAX_URL_BYTES = 8 * 1024;
/**
 * Deepest nesting accepted in a JSON body or WS message. JSON.parse copes with any depth, but the recursive
 * code behind it (JSON.stringify when a value is logged or echoed, schema checks, merges) overflows the stack
 * somewhere past a few thousand levels: a 500 on HTTP, an uncaught exception (a crash) in a WS callback.
 */
export const MAX_JSON_DEPTH = 256;

/** Where a request stands: the client went away, or its answer was written (or handed to a stream). */
export interface RequestState {
  aborted: boolean;
  done: boolean;
}

/**
 * The one decoder of request bodies and WS messages. Fatal: invalid UTF-8 is refused, never turned into U+FFFD and
 * stored as if the client had sent it. `ignoreBOM` keeps a byte-order mark in the text, where JSON.parse refuses it
 * as it always did.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The UTF-8 text of `bytes`; undefined when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array | ArrayBuffer): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** True when `value` nests arrays/objects deeper than `max` (iterative: safe at any depth). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Bodies are JSON, so a body must say so: `application/json` or a `+json` type (parameters such as charset aside).
 * A browser sends `text/plain`, form and multipart bodies cross-site without asking (no CORS preflight); refusing
 * every other type means no web page can post a body here unless the CORS policy lets it.
 */
export function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(';', 1)[0].trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9!#$&^_.-]+\+json$/.test(type);
}

/** The 414 or 431 a request's head earns, if any (heads uWS accepted whole but that are over the contract's limits). */
export function headLimitError(raw: RawRequest): AppError | undefined {
  if (raw.url.length + raw.rawQuery.length > MAX_URL_BYTES) return new AppError('URI_TOO_LONG', 'URI too long');
  return checkHeaderSize(raw.headers);
}

export function bodyTooLarge(maxBody: number): AppError {
  return new AppError('BODY_TOO_LARGE', `Request body too large (max ${maxBody} bytes)`);
}

/**
 * Reads the body uWS streams in, up to `maxBody` bytes (413 past it) and for at most 30 s (408), then hands it to
 * `done` in one buffer. Registers `onData` at once: call it synchronously from the request callback.
 */
export function readBody(res: HttpResponse, state: RequestState, maxBody: number, done: (b: Buffer) => void, fail: (e: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const timer = setTimeout(() => {
    if (finished || state.aborted) return;
    finished = true;
    fail(new AppError('REQUEST_TIMEOUT', 'Request timeout'));
  }, BODY_TIMEOUT_MS);
  res.onData((chunk, isLast) => {
    if (finished) return;
    size += chunk.byteLength;
    if (size > maxBody) {
      finished = true;
      clearTimeout(timer);
      fail(bodyTooLarge(maxBody));
      return;
    }
    // uWS neuters the chunk after this callback: copy it
    chunks.push(Buffer.from(new Uint8Array(chunk.slice(0))));
    if (isLast) {
      finished = true;
      clearTimeout(timer);
      done(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    }
  });
}

/**
 * The JSON object a body carries (`{}` for none or whitespace), or the 415/400 it earns: not JSON by its media
 * type, not UTF-8, malformed, not an object, nested too deep.
 */
export function parseJsonBody(bodyBytes: Buffer | undefined, contentType: string | undefined): unknown {
  let body: unknown = {};
  if (!bodyBytes || bodyBytes.length === 0) return body;
  if (!isJsonMediaType(contentType)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Unsupported Content-Type '${contentType ?? ''}': request bodies must be application/json`);
  }
  const text = decodeUtf8(bodyBytes);
  if (text === undefined) throw new AppError('INVALID_UTF8', 'Request body is not valid UTF-8');
  if (text.trim() !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      throw new AppError('MALFORMED_JSON', 'Malformed JSON in request body');
    }
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new AppError('INVALID_REQUEST', 'Invalid request: body: must be a JSON object');
  if (nestedDeeperThan(body, MAX_JSON_DEPTH)) throw new AppError('INVALID_REQUEST', `Invalid request: body: nested deeper than ${MAX_JSON_DEPTH} levels`);
  return body;
}
