import fc from 'fast-check';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { resolveAuthConfig } from '../../../src/http/auth/config.js';
import { verifyToken } from '../../../src/http/auth/jwt.js';

const SECRET = 'prop-secret';
const key = new TextEncoder().encode(SECRET);

describe('token time boundaries with an injected clock', () => {
  it('accepts a token iff nbf <= now < exp (now in whole seconds, no tolerance), else names the failing claim', async () => {
    let nowMs = 0;
    const cfg = (await resolveAuthConfig({ secret: SECRET, clock: () => nowMs }, {}))!;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1_000_000_000, max: 4_000_000_000 }), // now, seconds
        fc.integer({ min: 0, max: 999 }), // milliseconds inside that second
        fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }), // nbf - now
        fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }), // exp - now
        async (nowSec, ms, nbfOffset, expOffset) => {
          const claims: Record<string, number> = {};
          if (nbfOffset !== undefined) claims.nbf = nowSec + nbfOffset;
          if (expOffset !== undefined) claims.exp = nowSec + expOffset;
          const token = await new SignJWT({ sub: 'p', ...claims }).setProtectedHeader({ alg: 'HS256' }).sign(key);
          nowMs = nowSec * 1000 + ms;
          const result = await verifyToken(token, cfg);

          const notYet = claims.nbf !== undefined && !(claims.nbf <= nowSec);
          const expired = claims.exp !== undefined && !(nowSec < claims.exp);
          expect(result.ok).toBe(!notYet && !expired);
          if (expired)
            expect(result).toMatchObject({ error: 'Token expired' }); // expiry wins over nbf
          else if (notYet) expect(result).toMatchObject({ error: 'Invalid token: jwt not active' });
        },
      ),
      { numRuns: 400 },
    );
  });
});
