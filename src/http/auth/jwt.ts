/**
 * Bearer token verification (docs/api-reference.md "Tokens") with jose 6, mapping every failure to the one 401
 * text the contract names. Time comes from the config's injected clock so `exp`/`nbf` boundaries are testable:
 * a token is accepted iff nbf <= now < exp, with now in whole seconds and no clock tolerance.
 */
import type { JWTPayload } from 'jose';
import type { AuthUser } from '../../contract/routes.js';
import type { ResolvedAuthConfig } from './config.js';

export type VerifyResult = { ok: true; user: AuthUser; payload: JWTPayload } | { ok: false; error: string; /** what went wrong inside, for the server log (never sent) */ cause?: unknown };

export const AUTH_REQUIRED = 'Authentication required';
const TOKEN_EXPIRED = 'Token expired';
const INVALID_AUTHENTICATION = 'Invalid authentication';
const invalidToken = (reason: string) => `Invalid token: ${reason}`;

type Jose = typeof import('jose');
let jose: Jose | undefined;

/**
 * jose, imported on first use: a server without JWT auth never loads it (start-up time and memory);
 * one with JWT auth loads it while starting (src/server-assembly.ts), so no request waits for it.
 */
export async function loadJose(): Promise<Jose> {
  return (jose ??= await import('jose'));
}

/** Extracts the token of `Authorization: Bearer <token>` (scheme case-insensitive); undefined otherwise. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization);
  return match ? match[1] : undefined;
}

/** Verifies the Authorization header: none or another scheme → `Authentication required`. */
export async function verifyBearer(authorization: string | undefined, cfg: ResolvedAuthConfig): Promise<VerifyResult> {
  const token = bearerToken(authorization);
  if (token === undefined) return { ok: false, error: AUTH_REQUIRED };
  return verifyToken(token, cfg);
}

/** Verifies a bare token (the WebSocket `?token=`); an empty one → `Authentication required`. */
export async function verifyToken(token: string | undefined, cfg: ResolvedAuthConfig): Promise<VerifyResult> {
  if (!token) return { ok: false, error: AUTH_REQUIRED };
  const nowMs = cfg.clock();
  // Expiry is checked first (docs/api-reference.md "Tokens"): a token past its `exp` answers `Token expired` whatever else is
  // wrong with it, so a client knows to refresh. Nothing is trusted from the unverified payload beyond that
  // rejection: every accepted token still goes through full verification below.
  const exp = unverifiedExp(token);
  if (exp !== undefined && exp <= Math.floor(nowMs / 1000)) return { ok: false, error: TOKEN_EXPIRED };

  const { jwtVerify, errors } = jose ?? (await loadJose());
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, cfg.key.key, {
      algorithms: [...cfg.algorithms],
      audience: cfg.audience,
      issuer: cfg.issuer,
      currentDate: new Date(nowMs),
      clockTolerance: 0,
    }));
  } catch (err) {
    return { ok: false, error: describeFailure(err, cfg, errors), cause: err };
  }

  let user: unknown;
  if (cfg.mapUser) {
    try {
      user = await cfg.mapUser(payload);
    } catch (err) {
      return { ok: false, error: INVALID_AUTHENTICATION, cause: err };
    }
  } else {
    user = { ...payload };
  }
  if (user === null || typeof user !== 'object') return { ok: false, error: INVALID_AUTHENTICATION };
  return { ok: true, user: user as AuthUser, payload };
}

/** The `exp` claim of a compact JWS, read without verifying it; undefined when absent or unreadable. */
function unverifiedExp(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return claims && typeof claims === 'object' && typeof claims.exp === 'number' ? claims.exp : undefined;
  } catch {
    return undefined;
  }
}

/** The contract's texts, worded as jsonwebtoken words them (what VoltAgent clients already see). */
function describeFailure(err: unknown, cfg: ResolvedAuthConfig, errors: Jose['errors']): string {
  if (err instanceof errors.JWTExpired) return TOKEN_EXPIRED;
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf' && err.reason === 'check_failed') return invalidToken('jwt not active');
    if (err.claim === 'aud') return invalidToken(`jwt audience invalid. expected: ${list(cfg.audience).join(' or ')}`);
    if (err.claim === 'iss') return invalidToken(`jwt issuer invalid. expected: ${list(cfg.issuer).join(',')}`);
    return invalidToken('jwt malformed');
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return invalidToken('invalid signature');
  // `alg` outside the accepted list (`none`, or HS* against a public key, RS* against a secret, ...)
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return invalidToken('invalid algorithm');
  // jose rejects a key that does not suit the algorithm with a TypeError (unreachable with a resolved config,
  // whose algorithms all suit its key, but kept on the safe side)
  if (err instanceof TypeError) return invalidToken('invalid algorithm');
  return invalidToken('jwt malformed');
}

function list(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}
