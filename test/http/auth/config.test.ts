import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AuthConfigError, authConfigSchema, describeAuth, resolveAuthConfig } from '../../../src/http/auth/config.js';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();

describe('resolveAuthConfig', () => {
  it('answers undefined (no auth) when neither the config nor JWT_SECRET asks for auth', async () => {
    expect(await resolveAuthConfig(undefined, {})).toBeUndefined();
    expect(await resolveAuthConfig(undefined, { JWT_SECRET: '' })).toBeUndefined();
  });

  it('switches JWT on from JWT_SECRET alone with the defaults and says so', async () => {
    const cfg = await resolveAuthConfig(undefined, { JWT_SECRET: 's3cret' });
    expect(cfg).toMatchObject({ fromEnv: true, defaultPrivate: false, algorithms: ['HS256'], publicRoutes: [], protectedRoutes: [] });
    expect(cfg!.key.kind).toBe('secret');
    expect(Buffer.from(cfg!.key.key as Uint8Array).toString()).toBe('s3cret');
    expect(describeAuth(cfg)).toBe('authentication: JWT from JWT_SECRET (HS256), defaultPrivate=false');
    expect(describeAuth(undefined)).toBe('authentication: none (all routes public)');
  });

  it('takes the secret from JWT_SECRET when the config has none, and prefers the configured one', async () => {
    const fromEnv = await resolveAuthConfig({ defaultPrivate: true }, { JWT_SECRET: 'env-secret' });
    expect(fromEnv).toMatchObject({ fromEnv: false, defaultPrivate: true });
    expect(Buffer.from(fromEnv!.key.key as Uint8Array).toString()).toBe('env-secret');
    const configured = await resolveAuthConfig({ secret: 'cfg-secret' }, { JWT_SECRET: 'env-secret' });
    expect(Buffer.from(configured!.key.key as Uint8Array).toString()).toBe('cfg-secret');
  });

  it('lets the --default-private override win over the config', async () => {
    expect((await resolveAuthConfig({ secret: 's', defaultPrivate: false }, {}, { defaultPrivate: true }))!.defaultPrivate).toBe(true);
    expect((await resolveAuthConfig(undefined, { JWT_SECRET: 's' }, { defaultPrivate: true }))!.defaultPrivate).toBe(true);
  });

  it('refuses --default-private when there is no way to verify tokens', async () => {
    await expect(resolveAuthConfig(undefined, {}, { defaultPrivate: true })).rejects.toThrow('--default-private needs JWT auth');
  });

  it('refuses an auth section without any secret', async () => {
    await expect(resolveAuthConfig({ defaultPrivate: true }, {})).rejects.toThrow('auth.secret is required (or set JWT_SECRET)');
  });

  it('names the bad field and the bad pattern in config errors', async () => {
    await expect(resolveAuthConfig({ secret: 's', publicRoutes: ['GET /ok', 'FETCH /x'] }, {})).rejects.toThrow("Invalid auth config: auth.publicRoutes.1: Invalid route pattern 'FETCH /x'");
    await expect(resolveAuthConfig({ secret: 's', verifyOptions: { algorithms: ['none' as any] } }, {})).rejects.toThrow('auth.verifyOptions.algorithms.0');
    await expect(resolveAuthConfig({ secret: 's', mapUser: 'nope' as any }, {})).rejects.toThrow('auth.mapUser: must be a function');
  });

  it('compiles publicRoutes and protectedRoutes once', async () => {
    const cfg = await resolveAuthConfig({ secret: 's', publicRoutes: ['POST /agents/:id/text'], protectedRoutes: ['/x/**'] }, {});
    expect(cfg!.publicRoutes[0]).toMatchObject({ source: 'POST /agents/:id/text', method: 'POST' });
    expect(cfg!.protectedRoutes[0]).toMatchObject({ tail: 'zero-or-more' });
  });

  it('refuses algorithms the key cannot verify, which is how algorithm confusion is ruled out at start-up', async () => {
    await expect(resolveAuthConfig({ secret: 's', verifyOptions: { algorithms: ['HS256', 'RS256'] } }, {})).rejects.toThrow('RS256 cannot be verified with an HMAC secret');
    await expect(resolveAuthConfig({ secret: rsaPem, verifyOptions: { algorithms: ['HS256'] } }, {})).rejects.toThrow('HS256 cannot be verified with a rsa public key');
    await expect(resolveAuthConfig({ secret: rsaPem, verifyOptions: { algorithms: ['RS256', 'PS384'] } }, {})).resolves.toMatchObject({
      algorithms: ['RS256', 'PS384'],
    });
  });

  it('defaults the algorithm of a public key to the one its type implies', async () => {
    expect((await resolveAuthConfig({ secret: rsaPem }, {}))!.algorithms).toEqual(['RS256']);
    const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect((await resolveAuthConfig({ secret: ec384 }, {}))!.algorithms).toEqual(['ES384']);
    const ed = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect((await resolveAuthConfig({ secret: ed }, {}))!.algorithms).toEqual(['EdDSA', 'Ed25519']);
  });

  it('reads a PEM certificate as its public key', async () => {
    const cert = readFileSync(new URL('./fixtures/ec-p256-cert.pem', import.meta.url), 'utf8');
    const cfg = await resolveAuthConfig({ secret: cert }, {});
    expect(cfg!.key.kind).toBe('public');
    expect(cfg!.algorithms).toEqual(['ES256']);
  });

  it('reads JWK objects: oct as an HMAC secret, others as public keys', async () => {
    const oct = await resolveAuthConfig({ secret: { kty: 'oct', k: Buffer.from('jwk-secret').toString('base64url') } }, {});
    expect(oct!.key.kind).toBe('secret');
    expect(Buffer.from(oct!.key.key as Uint8Array).toString()).toBe('jwk-secret');
    const rsaJwk = rsa.publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
    const pub = await resolveAuthConfig({ secret: rsaJwk }, {});
    expect(pub).toMatchObject({ key: { kind: 'public' }, algorithms: ['RS256'] });
  });

  it('reports an unreadable PEM or JWK as a config error', async () => {
    await expect(resolveAuthConfig({ secret: '-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----' }, {})).rejects.toThrow(AuthConfigError);
    await expect(resolveAuthConfig({ secret: { kty: 'RSA', n: 'x' } }, {})).rejects.toThrow('the JWK cannot be read');
    await expect(resolveAuthConfig({ secret: { kty: 'oct' } }, {})).rejects.toThrow('an oct JWK needs `k`');
  });

  it('uses the injected clock, else Date.now', async () => {
    const clock = () => 42;
    expect((await resolveAuthConfig({ secret: 's', clock }, {}))!.clock).toBe(clock);
    expect((await resolveAuthConfig({ secret: 's' }, {}))!.clock).toBe(Date.now);
  });
});

describe('authConfigSchema', () => {
  it('accepts the documented shape and rejects unknown algorithm names', () => {
    expect(
      authConfigSchema.safeParse({
        secret: 's',
        defaultPrivate: true,
        publicRoutes: ['GET /agents'],
        protectedRoutes: ['POST /workflows/:id/executions/:executionId/resume'],
        mapUser: (p: any) => ({ id: p.sub }),
        verifyOptions: { algorithms: ['HS512'], audience: ['a', 'b'], issuer: 'i' },
      }).success,
    ).toBe(true);
    expect(authConfigSchema.safeParse({ verifyOptions: { algorithms: ['none'] } }).success).toBe(false);
    expect(authConfigSchema.safeParse({ verifyOptions: { algorithms: [] } }).success).toBe(false);
  });
});
