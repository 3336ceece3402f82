/**
 * The one error table of the server: every failure a client can see has a code here, and the code
 * decides the HTTP status. Nothing guesses a status from message text.
 */

export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  MALFORMED_JSON: 400,
  INVALID_UTF8: 400,
  INVALID_REQUEST: 400,
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  CONSOLE_ACCESS_REQUIRED: 401,
  FORBIDDEN: 403,
  CROSS_ORIGIN_REFUSED: 403,
  HOST_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  BODY_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
  EXECUTION_FAILED: 500,
  NOT_IMPLEMENTED: 501,
  UNAVAILABLE: 503,
  /** the event store cannot take writes now (database unreachable, write error); the server retries on its own */
  STORE_UNAVAILABLE: 503,
  /** the event store's disk is full; writes resume on their own once space is freed */
  INSUFFICIENT_STORAGE: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The one error class. `extra` keys are added to the failure envelope (e.g. `executionId`, `cause`). */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly extra?: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, extra?: Record<string, unknown>) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.extra = extra;
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const badRequest = (message: string, extra?: Record<string, unknown>) => new AppError('BAD_REQUEST', message, extra);
export const notFound = (message: string) => new AppError('NOT_FOUND', message);
export const conflict = (message: string) => new AppError('CONFLICT', message);
/** A request for an execution retention removed, while its tombstone lasts (src/workflows/retention.ts). */
export const executionRemoved = (executionId: string, removedAt: number) =>
  new AppError('NOT_FOUND', `Execution ${executionId} not found (removed by retention at ${new Date(removedAt).toISOString()})`, { executionId, removedAt: new Date(removedAt).toISOString() });
/** A request for an agent run retention removed, while its tombstone lasts (src/agents/run-retention.ts). */
export const agentRunRemoved = (runId: string, removedAt: number) =>
  new AppError('NOT_FOUND', `Agent run ${runId} not found (removed by retention at ${new Date(removedAt).toISOString()})`, { runId, removedAt: new Date(removedAt).toISOString() });

export interface FailureEnvelope {
  success: false;
  error: string;
  [key: string]: unknown;
}

/** Turns anything thrown into a status and the failure envelope. Unknown errors become a generic 500. */
export function toFailure(err: unknown): { status: number; body: FailureEnvelope } {
  if (err instanceof AppError) {
    return { status: err.status, body: { success: false, error: err.message, ...(err.extra ?? {}) } };
  }
  return { status: 500, body: { success: false, error: 'Internal server error' } };
}

/** Formats zod issues as `path: message; path: message` with a fallback name for the root. */
export function formatIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>, root = 'body'): string {
  return issues.map((i) => `${i.path.length ? i.path.map((p) => String(p)).join('.') : root}: ${i.message}`).join('; ');
}

export const invalidRequest = (issues: string) => new AppError('INVALID_REQUEST', `Invalid request: ${issues}`);
