/**
 * Request-header size (docs/api-reference.md "Limits and paging": at least 16 KiB accepted, more → 431).
 *
 * What the installed uWS build does (uWebSockets.js = @trufflesuite/uws-js-unofficial 20.30.0, binary
 * uws_linux_x64_115.node; measured by test/http/auth/header-limit.test.ts):
 * - uWS parses a request head in place in its receive buffer (512 KiB). A head that arrives in ONE read is accepted
 *   whatever its size up to that buffer (15 KiB and 64 KiB heads from fetch on loopback are answered normally).
 * - A head split across reads is copied into a fallback buffer capped at 4096 bytes (request line + headers +
 *   the final CRLF CRLF). One byte more and uWS closes the connection: no status line, no 431, the client sees
 *   the socket close or reset, and no JS callback runs. Over a real network (MSS ~1448 bytes) any head larger than
 *   one segment may be split, so 4 KiB is the only limit this build guarantees.
 * - At most 48 header lines: the parser has 50 slots (the request line, the headers, the end mark), a compile-time
 *   constant. With a 49th line it finds no end of the head and waits for more bytes, as for a head cut in two: no
 *   status line, no JS callback, and the connection stays open until uWS's idle timeout (~10 s) closes it (at
 *   once when the head is over the 4096-byte fallback cap). JS cannot answer 431 there. The builds on the npm
 *   registry were measured with 49 to 200 short lines: upstream uWS's binaries (republished as `uwebsockets`
 *   3.0.6 by a third party) parse 98 lines and then behave the same, silent until the idle FIN; they answer
 *   431 only for a head over the byte limit. `@btc-vision/uwebsockets.js` 20.57 needs glibc 2.38 (Debian 12
 *   has 2.36) and does not load; `@based/uws` 20.6 has no Node 20 binary. No build answers 431 for lines.
 * - This build does NOT read `UWS_HTTP_MAX_HEADERS_SIZE` (the string is absent from the binary, and setting it
 *   changes nothing); later upstream uWS releases (from late 2023) read it once when the addon loads, use it as
 *   that fallback cap and answer 431 above it.
 *
 * So: `ensureHeaderLimit()` sets the variable for builds that honour it (call it before the first import of
 * `uWebSockets.js`), and `checkHeaderSize()` gives the contract's 431 in JS for heads uWS did accept whole but that
 * are over the limit.
 */
import { AppError } from '../../errors.js';

/** The contract's limit: 16 KiB of request headers. */
export const HEADER_LIMIT_BYTES = 16_384;
/** The largest head (request line + headers) this uWS build accepts when it arrives in several reads. */
export const UWS_SPLIT_HEAD_LIMIT_BYTES = 4096;
const HEADERS_TOO_LARGE = 'Request header fields too large';
/** The most header lines (Host included) this uWS build parses; a request with more is never handed to JS. */
export const UWS_MAX_HEADER_LINES = 48;

/**
 * Sets `UWS_HTTP_MAX_HEADERS_SIZE` to `bytes` unless the operator already set it, and returns the value in effect.
 * Must run before `uWebSockets.js` is first imported (the addon reads it once at load).
 */
export function ensureHeaderLimit(bytes = HEADER_LIMIT_BYTES, env: NodeJS.ProcessEnv = process.env): number {
  if (!Number.isInteger(bytes) || bytes <= 0) throw new RangeError(`header limit must be a positive integer, got ${bytes}`);
  const current = env.UWS_HTTP_MAX_HEADERS_SIZE;
  if (current === undefined || current === '') {
    env.UWS_HTTP_MAX_HEADERS_SIZE = String(bytes);
    return bytes;
  }
  const parsed = Number.parseInt(current, 10);
  return Number.isFinite(parsed) ? parsed : bytes;
}

/** Size of a header block as sent: `name: value\r\n` per header. */
export function headerBlockBytes(headers: Iterable<readonly [string, string]> | Readonly<Record<string, string>>): number {
  const entries = isIterable(headers) ? headers : Object.entries(headers);
  let total = 0;
  for (const [name, value] of entries) total += Buffer.byteLength(name) + Buffer.byteLength(value) + 4;
  return total;
}

/** A 431 AppError when the headers exceed `limit`; undefined otherwise. */
export function checkHeaderSize(headers: Iterable<readonly [string, string]> | Readonly<Record<string, string>>, limit = HEADER_LIMIT_BYTES): AppError | undefined {
  return headerBlockBytes(headers) > limit ? new AppError('HEADERS_TOO_LARGE', HEADERS_TOO_LARGE) : undefined;
}

function isIterable(v: unknown): v is Iterable<readonly [string, string]> {
  return typeof (v as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function';
}
