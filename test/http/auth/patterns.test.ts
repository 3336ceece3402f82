import { describe, expect, it } from 'vitest';
import { matchAny, matchPattern, parsePattern, PatternError } from '../../../src/http/auth/patterns.js';

describe('parsePattern', () => {
  it('reads an optional method, upper-cased, and the path segments', () => {
    expect(parsePattern('post /agents/:id/text')).toMatchObject({
      method: 'POST',
      tail: 'none',
      segments: [{ kind: 'literal', value: 'agents' }, { kind: 'any' }, { kind: 'literal', value: 'text' }],
    });
    expect(parsePattern('/doc').method).toBeUndefined();
  });

  it('recognises a trailing /* and /** as tails', () => {
    expect(parsePattern('GET /api/memory/*')).toMatchObject({ tail: 'one-or-more', segments: [{ value: 'api' }, { value: 'memory' }] });
    expect(parsePattern('/observability/**')).toMatchObject({ tail: 'zero-or-more', segments: [{ value: 'observability' }] });
  });

  it('rejects unknown methods, relative paths, query strings, inner ** and nameless params with the pattern in the message', () => {
    expect(() => parsePattern('FETCH /x')).toThrow(PatternError);
    expect(() => parsePattern('FETCH /x')).toThrow("Invalid route pattern 'FETCH /x': unknown method 'FETCH'");
    expect(() => parsePattern('agents')).toThrow('the path must start with /');
    expect(() => parsePattern('GET /agents?x=1')).toThrow('without query string');
    expect(() => parsePattern('/a/**/b')).toThrow('only allowed as the last segment');
    expect(() => parsePattern('/a/:/b')).toThrow('needs a name');
    expect(() => parsePattern('GET POST /a')).toThrow('expected');
  });
});

describe('matchPattern', () => {
  it('matches the method case-insensitively and any method when none is given', () => {
    expect(matchPattern('post /agents/:id/text', 'POST', '/agents/a1/text')).toBe(true);
    expect(matchPattern('POST /agents/:id/text', 'post', '/agents/a1/text')).toBe(true);
    expect(matchPattern('POST /agents/:id/text', 'GET', '/agents/a1/text')).toBe(false);
    expect(matchPattern('/agents/:id/text', 'DELETE', '/agents/a1/text')).toBe(true);
    expect(matchPattern('/ws/logs', 'WS', '/ws/logs')).toBe(true);
  });

  it('keeps WS patterns for WebSocket upgrades only', () => {
    expect(matchPattern('WS /ws/logs', 'WS', '/ws/logs')).toBe(true);
    expect(matchPattern('WS /ws/logs', 'GET', '/ws/logs')).toBe(false);
    expect(matchPattern('GET /ws/logs', 'WS', '/ws/logs')).toBe(false);
  });

  it('lets :name and * stand for exactly one segment', () => {
    expect(matchPattern('GET /agents/*/card', 'GET', '/agents/x/card')).toBe(true);
    expect(matchPattern('GET /agents/*/card', 'GET', '/agents/x/y/card')).toBe(false);
    expect(matchPattern('GET /agents/:id', 'GET', '/agents')).toBe(false);
    expect(matchPattern('GET /agents/:id', 'GET', '/agents/x/y')).toBe(false);
  });

  it('lets a trailing /* match one or more further segments but not the prefix itself', () => {
    const p = parsePattern('GET /api/memory/*');
    expect(matchPattern(p, 'GET', '/api/memory/conversations')).toBe(true);
    expect(matchPattern(p, 'GET', '/api/memory/conversations/c1/messages')).toBe(true);
    expect(matchPattern(p, 'GET', '/api/memory')).toBe(false);
    expect(matchPattern(p, 'GET', '/api/memoryx/a')).toBe(false);
  });

  it('lets a trailing /** match the prefix and everything below', () => {
    const p = parsePattern('/observability/**');
    expect(matchPattern(p, 'GET', '/observability')).toBe(true);
    expect(matchPattern(p, 'GET', '/observability/traces/t1')).toBe(true);
    expect(matchPattern(p, 'GET', '/observabilityx')).toBe(false);
    expect(matchPattern('/**', 'GET', '/')).toBe(true);
  });

  it('compares segments case-sensitively and does not normalise trailing slashes', () => {
    expect(matchPattern('GET /Agents', 'GET', '/agents')).toBe(false);
    expect(matchPattern('GET /agents', 'GET', '/agents/')).toBe(false);
    expect(matchPattern('GET /agents/', 'GET', '/agents/')).toBe(true);
    expect(matchPattern('GET /a/b', 'GET', '/a//b')).toBe(false);
  });

  it('treats regex characters literally', () => {
    expect(matchPattern('GET /a.b', 'GET', '/a.b')).toBe(true);
    expect(matchPattern('GET /a.b', 'GET', '/axb')).toBe(false);
    expect(matchPattern('GET /.well-known/:id/agent-card.json', 'GET', '/.well-known/a1/agent-card.json')).toBe(true);
  });

  it('answers false for a path that does not start with a slash', () => {
    expect(matchPattern('/**', 'GET', 'agents')).toBe(false);
  });

  it('matchAny is true when one compiled pattern of the list matches', () => {
    const list = ['GET /a', 'POST /b/*'].map(parsePattern);
    expect(matchAny(list, 'POST', '/b/c')).toBe(true);
    expect(matchAny(list, 'GET', '/b/c')).toBe(false);
    expect(matchAny([], 'GET', '/a')).toBe(false);
  });
});
