/**
 * How the server's logger writes an error: `{type, message, stack}` and nothing else. pino's standard
 * serializer copies every enumerable property, inherited ones included, so a `DOMException` (an aborted
 * `fetch`) printed its 25 legacy code constants into each line, and an error carrying a request or a socket
 * printed those. A cause chain is kept as text at the end of the message, where the transport's own reason
 * (`connect ECONNREFUSED …`) usually is.
 */
import type { Logger } from 'pino';
import pino from 'pino';

interface LoggedError {
  type: string;
  message: string;
  stack?: string;
}

const MAX_CAUSES = 5;

const isErrorLike = (v: unknown): v is { name?: unknown; message: string; stack?: unknown; cause?: unknown } =>
  typeof v === 'object' && v !== null && typeof (v as { message?: unknown }).message === 'string';

function typeOf(err: { name?: unknown }): string {
  if (typeof err.name === 'string' && err.name !== '') return err.name;
  const ctor = (err as { constructor?: { name?: unknown } }).constructor;
  return typeof ctor?.name === 'string' && ctor.name !== '' ? ctor.name : 'Error';
}

function causeText(cause: unknown): string {
  if (isErrorLike(cause)) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' && !cause.message.includes(code) ? `${code} ${cause.message}` : cause.message;
  }
  try {
    return typeof cause === 'string' ? cause : (JSON.stringify(cause) ?? String(cause));
  } catch {
    return String(cause);
  }
}

/** The `err` serializer: error-like values become `{type, message, stack}`, anything else is left as it is. */
export function serializeLogError(value: unknown): unknown {
  if (!isErrorLike(value)) return value;
  let message = value.message;
  let cause = value.cause;
  for (let i = 0; i < MAX_CAUSES && cause !== undefined && cause !== null; i++) {
    message += `; cause: ${causeText(cause)}`;
    cause = isErrorLike(cause) ? cause.cause : undefined;
  }
  const out: LoggedError = { type: typeOf(value), message };
  if (typeof value.stack === 'string') out.stack = value.stack;
  return out;
}

/** Options every logger the server creates starts from. */
export const LOG_SERIALIZERS = { err: serializeLogError };

/**
 * Makes a logger handed in from outside (a test, an embedding application) write errors the same way. pino
 * keeps one serializers object per root logger, shared by the children created without serializers of their
 * own, so replacing `err` there covers the logger and those children, existing or future.
 */
export function useLogErrorSerializer(logger: Logger): void {
  const sym = pino.symbols.serializersSym as unknown as symbol;
  const serializers = (logger as unknown as Record<symbol, Record<string, unknown> | undefined>)[sym];
  if (serializers) serializers.err = serializeLogError;
}
