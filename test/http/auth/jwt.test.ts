import { createHmac, generateKeyPairSync } from 'node:crypto';
import { SignJWT, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { resolveAuthConfig, type AuthConfig, type ResolvedAuthConfig } from '../../../src/http/auth/config.js';
import { bearerToken, verifyBearer, verifyToken } from '../../../src/http/auth/jwt.js';

const SECRET = 'jwt-test-secret';
const NOW_MS = 1_800_000_000_000; // fixed clock for every case
const NOW = NOW_MS / 1000;
const secretKey = new TextEncoder().encode(SECRET);

async function config(extra: Partial<AuthConfig> = {}): Promise<ResolvedAuthConfig> {
  return (await resolveAuthConfig({ secret: SECRET, clock: () => NOW_MS, ...extra }, {}))!;
}

function hs256(payload: JWTPayload = {}, key: Uint8Array = secretKey, alg = 'HS256') {
  return new SignJWT({ sub: 'u1', ...payload })
    .setProtectedHeader({ alg, typ: 'JWT' })
    .setIssuedAt(NOW - 5)
    .setExpirationTime(NOW + 60)
    .sign(key);
}

describe('bearerToken', () => {
  it('reads only the Bearer scheme, case-insensitively', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('BEARER   abc ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken('abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});

describe('verifyBearer', () => {
  it('accepts a valid HS256 token and exposes the payload as the user', async () => {
    const cfg = await config();
    const result = await verifyBearer(`Bearer ${await hs256({ role: 'admin' })}`, cfg);
    expect(result).toMatchObject({ ok: true, user: { sub: 'u1', role: 'admin' }, payload: { sub: 'u1' } });
  });

  it('answers Authentication required with no header, another scheme or an empty token', async () => {
    const cfg = await config();
    for (const header of [undefined, '', 'Basic dXNlcjpwYXNz', 'Bearer ', 'Token abc']) {
      expect(await verifyBearer(header, cfg)).toEqual({ ok: false, error: 'Authentication required' });
    }
    expect(await verifyToken('', cfg)).toEqual({ ok: false, error: 'Authentication required' });
  });

  it('answers Token expired for an expired token, before any other check', async () => {
    const cfg = await config({ verifyOptions: { audience: 'aud-1' } });
    const expired = await new SignJWT({ aud: 'other' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(NOW - 1)
      .sign(secretKey);
    expect(await verifyBearer(`Bearer ${expired}`, cfg)).toEqual({ ok: false, error: 'Token expired' });
    const atBoundary = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(NOW).sign(secretKey);
    expect(await verifyToken(atBoundary, cfg)).toEqual({ ok: false, error: 'Token expired' });
  });

  it('answers jwt not active for a token used before its nbf', async () => {
    const cfg = await config();
    const early = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setNotBefore(NOW + 1)
      .sign(secretKey);
    expect(await verifyToken(early, cfg)).toMatchObject({ ok: false, error: 'Invalid token: jwt not active' });
  });

  it('answers invalid signature for a token signed with another secret', async () => {
    const cfg = await config();
    const forged = await hs256({}, new TextEncoder().encode('another-secret'));
    expect(await verifyToken(forged, cfg)).toMatchObject({ ok: false, error: 'Invalid token: invalid signature' });
  });

  it('answers jwt malformed for tokens that are not compact JWS', async () => {
    const cfg = await config();
    for (const token of ['abc', 'a.b.c', 'a.b', 'a.b.c.d']) {
      expect(await verifyToken(token, cfg)).toMatchObject({ ok: false, error: 'Invalid token: jwt malformed' });
    }
    // correctly signed, but the payload is not a JSON object
    const input = `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from('[1,2]').toString('base64url')}`;
    const signed = `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
    expect(await verifyToken(signed, cfg)).toMatchObject({ ok: false, error: 'Invalid token: jwt malformed' });
  });

  it('always rejects alg none, even when the payload is otherwise perfect', async () => {
    const cfg = await config();
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'u1', exp: NOW + 60 })}.`;
    expect(await verifyToken(none, cfg)).toMatchObject({ ok: false, error: 'Invalid token: invalid algorithm' });
    const noneUpper = `${b64({ alg: 'NONE' })}.${b64({ sub: 'u1' })}.`;
    expect(await verifyToken(noneUpper, cfg)).toMatchObject({ ok: false, error: 'Invalid token: invalid algorithm' });
  });

  it('rejects a token whose algorithm is not in the accepted list', async () => {
    const cfg = await config(); // HS256 only
    const hs512 = await hs256({}, secretKey, 'HS512');
    expect(await verifyToken(hs512, cfg)).toMatchObject({ ok: false, error: 'Invalid token: invalid algorithm' });
    const both = await config({ verifyOptions: { algorithms: ['HS256', 'HS512'] } });
    expect(await verifyToken(hs512, both)).toMatchObject({ ok: true });
  });

  it('checks the audience and the issuer with jsonwebtoken-worded reasons', async () => {
    const cfg = await config({ verifyOptions: { audience: ['api-a', 'api-b'], issuer: 'https://issuer.test' } });
    const good = await hs256({ aud: 'api-b', iss: 'https://issuer.test' });
    expect(await verifyToken(good, cfg)).toMatchObject({ ok: true });
    const wrongAud = await hs256({ aud: 'api-c', iss: 'https://issuer.test' });
    expect(await verifyToken(wrongAud, cfg)).toMatchObject({ ok: false, error: 'Invalid token: jwt audience invalid. expected: api-a or api-b' });
    const missingAud = await hs256({ iss: 'https://issuer.test' });
    expect(await verifyToken(missingAud, cfg)).toMatchObject({ ok: false, error: 'Invalid token: jwt audience invalid. expected: api-a or api-b' });
    const wrongIss = await hs256({ aud: 'api-a', iss: 'https://evil.test' });
    expect(await verifyToken(wrongIss, cfg)).toMatchObject({ ok: false, error: 'Invalid token: jwt issuer invalid. expected: https://issuer.test' });
  });

  describe('with a public key', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsaPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();

    it('verifies RS256 and PS256 tokens with one RSA key', async () => {
      const cfg = (await resolveAuthConfig({ secret: rsaPem, clock: () => NOW_MS, verifyOptions: { algorithms: ['RS256', 'PS256'] } }, {}))!;
      for (const alg of ['RS256', 'PS256']) {
        const token = await new SignJWT({ sub: 'r' })
          .setProtectedHeader({ alg })
          .setExpirationTime(NOW + 60)
          .sign(rsa.privateKey);
        expect(await verifyToken(token, cfg)).toMatchObject({ ok: true, user: { sub: 'r' } });
      }
    });

    it('rejects an HS256 token signed with the public key text as HMAC secret (algorithm confusion)', async () => {
      const cfg = (await resolveAuthConfig({ secret: rsaPem, clock: () => NOW_MS }, {}))!;
      const confused = await hs256({}, new TextEncoder().encode(rsaPem));
      expect(await verifyToken(confused, cfg)).toMatchObject({ ok: false, error: 'Invalid token: invalid algorithm' });
    });

    it('rejects an RS256 token against an HMAC secret', async () => {
      const cfg = await config();
      const rs = await new SignJWT({ sub: 'r' })
        .setProtectedHeader({ alg: 'RS256' })
        .setExpirationTime(NOW + 60)
        .sign(rsa.privateKey);
      expect(await verifyToken(rs, cfg)).toMatchObject({ ok: false, error: 'Invalid token: invalid algorithm' });
    });

    it('verifies ES256 and EdDSA tokens with their keys', async () => {
      const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const ecCfg = (await resolveAuthConfig({ secret: ec.publicKey.export({ type: 'spki', format: 'pem' }).toString(), clock: () => NOW_MS }, {}))!;
      const es = await new SignJWT({ sub: 'e' }).setProtectedHeader({ alg: 'ES256' }).sign(ec.privateKey);
      expect(await verifyToken(es, ecCfg)).toMatchObject({ ok: true });
      const ed = generateKeyPairSync('ed25519');
      const edCfg = (await resolveAuthConfig({ secret: ed.publicKey.export({ format: 'jwk' }), clock: () => NOW_MS }, {}))!;
      const eddsa = await new SignJWT({ sub: 'd' }).setProtectedHeader({ alg: 'EdDSA' }).sign(ed.privateKey);
      expect(await verifyToken(eddsa, edCfg)).toMatchObject({ ok: true });
      const otherEc = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const forged = await new SignJWT({ sub: 'e' }).setProtectedHeader({ alg: 'ES256' }).sign(otherEc.privateKey);
      expect(await verifyToken(forged, ecCfg)).toMatchObject({ ok: false, error: 'Invalid token: invalid signature' });
    });
  });

  describe('mapUser', () => {
    it('turns the payload into the user, sync or async', async () => {
      const sync = await config({ mapUser: (p) => ({ id: p.sub, kind: 'mapped' }) });
      expect(await verifyToken(await hs256(), sync)).toMatchObject({ ok: true, user: { id: 'u1', kind: 'mapped' } });
      const asyncCfg = await config({ mapUser: async (p) => ({ id: `${p.sub}!` }) });
      expect(await verifyToken(await hs256(), asyncCfg)).toMatchObject({ ok: true, user: { id: 'u1!' } });
    });

    it('answers Invalid authentication when it returns nothing, a non-object, or throws', async () => {
      for (const mapUser of [
        () => undefined,
        () => null,
        async () => undefined,
        () => 'u1' as any,
        () => {
          throw new Error('db down');
        },
      ]) {
        const cfg = await config({ mapUser });
        expect(await verifyToken(await hs256(), cfg)).toMatchObject({ ok: false, error: 'Invalid authentication' });
      }
    });

    it('is not called for a token that fails verification', async () => {
      let calls = 0;
      const cfg = await config({
        mapUser: () => {
          calls++;
          return { id: 'x' };
        },
      });
      await verifyToken(await hs256({}, new TextEncoder().encode('wrong')), cfg);
      expect(calls).toBe(0);
    });
  });
});
