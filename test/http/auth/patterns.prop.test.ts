import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchPattern, parsePattern } from '../../../src/http/auth/patterns.js';

/**
 * Reference model: the pattern turned into an anchored regular expression, written from the spec's wording
 * (one segment = anything without a slash; trailing /* = one or more `/segment`; trailing /** = zero or more).
 */
function model(pattern: string, method: string, path: string): boolean {
  const [m, p] = pattern.includes(' ') ? pattern.split(' ') : [undefined, pattern];
  if (m !== undefined && m.toUpperCase() !== method.toUpperCase()) return false;
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  let segs = p.split('/').slice(1);
  let tail = '';
  if (segs[segs.length - 1] === '**') {
    segs = segs.slice(0, -1);
    tail = '(/[^/]*)*';
  } else if (segs[segs.length - 1] === '*') {
    segs = segs.slice(0, -1);
    tail = '(/[^/]*)+';
  }
  const body = segs.map((s) => '/' + (s === '*' || s.startsWith(':') ? '[^/]*' : escape(s))).join('');
  return new RegExp(`^${body}${tail}$`).test(path);
}

const patternSegment = fc.constantFrom('a', 'b', 'A', 'x.y', ':id', '*');
const pathSegment = fc.constantFrom('a', 'b', 'A', 'x.y', 'xxy', '', 'id', '*');
const method = fc.constantFrom('GET', 'get', 'POST', 'Post', 'DELETE', 'WS');

const patternArb = fc
  .record({
    method: fc.option(fc.constantFrom('GET', 'post', 'WS', 'Delete'), { nil: undefined }),
    segs: fc.array(patternSegment, { maxLength: 4 }),
    tail: fc.constantFrom('', '/*', '/**'),
  })
  .map(({ method: m, segs, tail }) => {
    const p = segs.map((seg) => `/${seg}`).join('') + tail || '/';
    return m ? `${m} ${p}` : p;
  });

const pathArb = fc.array(pathSegment, { minLength: 1, maxLength: 6 }).map((segs) => '/' + segs.join('/'));

describe('pattern matcher against a regex reference model', () => {
  it('agrees with the model on every method, pattern and path', () => {
    fc.assert(
      fc.property(patternArb, method, pathArb, (pattern, m, path) => {
        const compiled = parsePattern(pattern);
        expect(matchPattern(compiled, m, path)).toBe(model(pattern, m, path));
      }),
      { numRuns: 3000 },
    );
  });

  it('the generators reach both outcomes often (the agreement above is not vacuous)', () => {
    const samples = fc.sample(fc.tuple(patternArb, method, pathArb), 3000);
    const matches = samples.filter(([p, m, path]) => model(p, m, path)).length;
    expect(matches).toBeGreaterThan(100);
    expect(samples.length - matches).toBeGreaterThan(100);
  });

  it('a trailing /* never matches the prefix itself while /** always does', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 4 }), (segs) => {
        const prefix = '/' + segs.join('/');
        expect(matchPattern(`${prefix}/*`, 'GET', prefix)).toBe(false);
        expect(matchPattern(`${prefix}/**`, 'GET', prefix)).toBe(true);
        expect(matchPattern(`${prefix}/*`, 'GET', `${prefix}/z`)).toBe(true);
        expect(matchPattern(`${prefix}/**`, 'GET', `${prefix}/z/y`)).toBe(true);
      }),
    );
  });
});
