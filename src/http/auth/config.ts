/**
 * The `auth` section of the server config (docs/api-reference.md "Authentication and auth classes") and its resolution into a
 * ready-to-use form: the key is imported once, algorithms are checked against the key type (no algorithm
 * confusion is even configurable), and route patterns are compiled once.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { z } from 'zod';
import { formatIssues } from '../../errors.js';
import type { AuthUser } from '../../contract/routes.js';
import { parsePattern, type CompiledPattern } from './patterns.js';

/** JWS algorithms jose 6 verifies; `none` is deliberately absent. */
const JWS_ALGORITHMS = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;
type JwsAlgorithm = (typeof JWS_ALGORITHMS)[number];

export type MapUser = (payload: JWTPayload) => AuthUser | undefined | null | Promise<AuthUser | undefined | null>;

const patternList = z.array(z.string()).superRefine((list, ctx) => {
  list.forEach((source, i) => {
    try {
      parsePattern(source);
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: [i], message: (err as Error).message });
    }
  });
});

const stringOrList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

const verifyOptionsSchema = z.object({
  algorithms: z.array(z.enum(JWS_ALGORITHMS)).min(1).optional(),
  audience: stringOrList.optional(),
  issuer: stringOrList.optional(),
});

export const authConfigSchema = z.object({
  /** HMAC secret, or a PEM public key (SPKI or certificate) for RS*, PS*, ES*, EdDSA, or a JWK object */
  secret: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
  defaultPrivate: z.boolean().optional(),
  publicRoutes: patternList.optional(),
  protectedRoutes: patternList.optional(),
  mapUser: z.custom<MapUser>((v) => typeof v === 'function', 'must be a function').optional(),
  verifyOptions: verifyOptionsSchema.optional(),
  /** epoch milliseconds; injectable so token time boundaries are testable */
  clock: z.custom<() => number>((v) => typeof v === 'function', 'must be a function').optional(),
});

export type AuthConfig = z.input<typeof authConfigSchema>;

/** The verification key as jose takes it: bytes for HMAC, a Node KeyObject for public keys. */
type VerificationKey = { kind: 'secret'; key: Uint8Array } | { kind: 'public'; key: KeyObject };

export interface ResolvedAuthConfig {
  readonly key: VerificationKey;
  /** accepted algorithms, all compatible with `key` */
  readonly algorithms: readonly JwsAlgorithm[];
  readonly audience?: string | string[];
  readonly issuer?: string | string[];
  readonly defaultPrivate: boolean;
  readonly publicRoutes: readonly CompiledPattern[];
  readonly protectedRoutes: readonly CompiledPattern[];
  readonly mapUser?: MapUser;
  readonly clock: () => number;
  /** true when auth was switched on only because JWT_SECRET is set (for the start-up log) */
  readonly fromEnv: boolean;
}

export type AuthEnv = Readonly<Record<string, string | undefined>>;

/** Thrown at start-up for an auth config that cannot work. */
export class AuthConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthConfigError';
  }
}

/**
 * Resolves the configured `auth` (or its absence) into a ResolvedAuthConfig, or undefined when no JWT auth
 * applies. No `auth` but `JWT_SECRET` set → JWT on with the defaults and `fromEnv: true`. `overrides.defaultPrivate`
 * is the CLI flag `--default-private` and wins over the config.
 */
export async function resolveAuthConfig(configAuth: AuthConfig | undefined, env: AuthEnv, overrides: { defaultPrivate?: boolean } = {}): Promise<ResolvedAuthConfig | undefined> {
  const envSecret = env.JWT_SECRET ? env.JWT_SECRET : undefined;
  if (configAuth === undefined && envSecret === undefined) {
    if (overrides.defaultPrivate) {
      throw new AuthConfigError('--default-private needs JWT auth: set JWT_SECRET or configure auth.secret');
    }
    return undefined;
  }
  const fromEnv = configAuth === undefined;
  const parsed = authConfigSchema.safeParse(configAuth ?? {});
  if (!parsed.success) {
    throw new AuthConfigError(
      `Invalid auth config: ${formatIssues(
        parsed.error.issues.map((i) => ({ ...i, path: ['auth', ...i.path] })),
        'auth',
      )}`,
    );
  }
  const cfg = parsed.data;
  const secret = cfg.secret ?? envSecret;
  if (secret === undefined) {
    throw new AuthConfigError('auth.secret is required (or set JWT_SECRET)');
  }
  const key = importVerificationKey(secret);
  const algorithms = resolveAlgorithms(key, cfg.verifyOptions?.algorithms);
  return {
    key,
    algorithms,
    audience: cfg.verifyOptions?.audience,
    issuer: cfg.verifyOptions?.issuer,
    defaultPrivate: overrides.defaultPrivate ?? cfg.defaultPrivate ?? false,
    publicRoutes: (cfg.publicRoutes ?? []).map(parsePattern),
    protectedRoutes: (cfg.protectedRoutes ?? []).map(parsePattern),
    mapUser: cfg.mapUser,
    clock: cfg.clock ?? Date.now,
    fromEnv,
  };
}

/** One line for the start-up log. */
export function describeAuth(cfg: ResolvedAuthConfig | undefined): string {
  if (!cfg) return 'authentication: none (all routes public)';
  const source = cfg.fromEnv ? ' from JWT_SECRET' : '';
  return `authentication: JWT${source} (${cfg.algorithms.join(', ')}), defaultPrivate=${cfg.defaultPrivate}`;
}

/**
 * A string starting with `-----BEGIN` is a PEM public key (or certificate, or a private key whose public half is
 * used); any other string is an HMAC secret. A JWK with `kty: oct` is a secret; other JWKs are public keys.
 * Node KeyObjects are used for public keys (rather than a CryptoKey bound to one algorithm) so one RSA key can
 * serve RS* and PS*; jose caches the per-algorithm CryptoKey, so verification stays cheap per request.
 */
function importVerificationKey(secret: string | Record<string, unknown>): VerificationKey {
  if (typeof secret === 'string') {
    if (secret.trimStart().startsWith('-----BEGIN')) {
      try {
        return { kind: 'public', key: createPublicKey(secret) };
      } catch (err) {
        throw new AuthConfigError(`auth.secret looks like a PEM key but cannot be read: ${(err as Error).message}`);
      }
    }
    return { kind: 'secret', key: new TextEncoder().encode(secret) };
  }
  if (secret.kty === 'oct') {
    if (typeof secret.k !== 'string' || secret.k.length === 0) throw new AuthConfigError('auth.secret: an oct JWK needs `k`');
    return { kind: 'secret', key: new Uint8Array(Buffer.from(secret.k, 'base64url')) };
  }
  try {
    return { kind: 'public', key: createPublicKey({ key: secret, format: 'jwk' }) };
  } catch (err) {
    throw new AuthConfigError(`auth.secret: the JWK cannot be read: ${(err as Error).message}`);
  }
}

const EC_CURVE_ALG: Record<string, JwsAlgorithm> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

/** Algorithms a key can verify: an HMAC secret only HS*, an RSA key RS* and PS*, an EC key the ES* of its curve. */
function algorithmsForKey(key: VerificationKey): JwsAlgorithm[] {
  if (key.kind === 'secret') return ['HS256', 'HS384', 'HS512'];
  const type = key.key.asymmetricKeyType;
  if (type === 'rsa') return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
  if (type === 'rsa-pss') return ['PS256', 'PS384', 'PS512'];
  if (type === 'ec') {
    const alg = EC_CURVE_ALG[key.key.asymmetricKeyDetails?.namedCurve ?? ''];
    return alg ? [alg] : [];
  }
  if (type === 'ed25519') return ['EdDSA', 'Ed25519'];
  return [];
}

/**
 * The accepted algorithms. Configured ones must all suit the key (an HS algorithm with a public key is exactly
 * the algorithm-confusion attack, so it is refused at start-up). Unset: HS256 for a secret (docs/api-reference.md "Tokens");
 * for a public key, the algorithm its type implies (RS256, PS256, ES256/384/512 by curve, EdDSA).
 */
function resolveAlgorithms(key: VerificationKey, configured: readonly JwsAlgorithm[] | undefined): JwsAlgorithm[] {
  const usable = algorithmsForKey(key);
  if (usable.length === 0) {
    const type = key.kind === 'public' ? key.key.asymmetricKeyType : 'secret';
    throw new AuthConfigError(`auth.secret: unsupported key type '${type}'`);
  }
  if (configured === undefined) {
    if (key.kind === 'secret') return ['HS256'];
    const type = key.key.asymmetricKeyType;
    if (type === 'rsa') return ['RS256'];
    if (type === 'rsa-pss') return ['PS256'];
    if (type === 'ed25519') return ['EdDSA', 'Ed25519'];
    return usable;
  }
  const unusable = configured.filter((a) => !usable.includes(a));
  if (unusable.length > 0) {
    const what = key.kind === 'secret' ? 'an HMAC secret' : `a ${key.key.asymmetricKeyType} public key`;
    throw new AuthConfigError(`auth.verifyOptions.algorithms: ${unusable.join(', ')} cannot be verified with ${what} (usable: ${usable.join(', ')})`);
  }
  return [...new Set(configured)];
}
