/**
 * The JSON-RPC 2.0 envelope of the A2A binding: request parsing, results, and the protocol's error
 * codes (A2A v1.0 §"JSON-RPC error codes"). A JSON-RPC error travels in a 200 response as the
 * binding prescribes; malformed JSON never gets here (the edge answers it with its 400).
 */
import type { RouteResult } from '../../contract/routes.js';

export const RPC_ERRORS = {
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  EXTENDED_CARD_NOT_CONFIGURED: -32007,
} as const;

export type RpcId = string | number | null;

/** A failure with a JSON-RPC code; the A2A handler turns it into the error response. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

export const taskNotFound = (id: string) => new RpcError(RPC_ERRORS.TASK_NOT_FOUND, `Task not found: ${id}`);
export const invalidParams = (detail: string) => new RpcError(RPC_ERRORS.INVALID_PARAMS, `Invalid params: ${detail}`);

export interface RpcRequest {
  id: RpcId;
  method: string;
  params: Record<string, unknown>;
}

/** Checks the envelope; a broken one is answered with `Invalid Request` and whatever id could be read. */
export function parseRpcRequest(body: unknown): RpcRequest | { error: RpcError; id: RpcId } {
  const b = (body ?? {}) as Record<string, unknown>;
  const rawId = b.id;
  const id: RpcId = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : null;
  if (b.jsonrpc !== '2.0') return { id, error: new RpcError(RPC_ERRORS.INVALID_REQUEST, "Invalid Request: jsonrpc must be '2.0'") };
  if (rawId !== undefined && rawId !== null && typeof rawId !== 'string' && typeof rawId !== 'number')
    return { id, error: new RpcError(RPC_ERRORS.INVALID_REQUEST, 'Invalid Request: id must be a string, a number or null') };
  if (typeof b.method !== 'string' || b.method === '') return { id, error: new RpcError(RPC_ERRORS.INVALID_REQUEST, 'Invalid Request: method must be a non-empty string') };
  const params = b.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return { id, error: invalidParams('params must be an object') };
  return { id, method: b.method, params: params as Record<string, unknown> };
}

export const rpcResult = (id: RpcId, result: unknown) => ({ jsonrpc: '2.0' as const, id, result });

export function rpcError(id: RpcId, err: RpcError) {
  return { jsonrpc: '2.0' as const, id, error: { code: err.code, message: err.message } };
}

/** A JSON-RPC response body, bare (no `{success, data}` envelope). */
export const rpcAnswer = (body: unknown): RouteResult => ({ kind: 'bare-json', status: 200, body });
