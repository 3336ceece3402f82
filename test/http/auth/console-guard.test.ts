import { describe, expect, it } from 'vitest';
import { checkConsoleAccess, constantTimeEqual, queryValue } from '../../../src/http/auth/console-guard.js';

const DENIED = { ok: false, error: 'Console access required' };

describe('checkConsoleAccess', () => {
  it('passes the dev header or ?dev=true outside production', () => {
    const env = { NODE_ENV: 'development' };
    expect(checkConsoleAccess({ headers: { 'x-service-dev': 'true' } }, env)).toEqual({ ok: true, via: 'dev' });
    expect(checkConsoleAccess({ headers: {}, query: { dev: 'true' } }, env)).toEqual({ ok: true, via: 'dev' });
    expect(checkConsoleAccess({ headers: {}, query: new URLSearchParams('dev=true') }, {})).toEqual({ ok: true, via: 'dev' });
    expect(checkConsoleAccess({ headers: {}, query: { dev: true } }, env)).toEqual({ ok: true, via: 'dev' });
  });

  it('refuses other dev values and no credentials at all', () => {
    const env = { NODE_ENV: 'development' };
    expect(checkConsoleAccess({ headers: { 'x-service-dev': 'yes' } }, env)).toEqual(DENIED);
    expect(checkConsoleAccess({ headers: {}, query: { dev: 'false' } }, env)).toEqual(DENIED);
    expect(checkConsoleAccess({ headers: {} }, env)).toEqual(DENIED);
  });

  it('ignores the dev flag in production', () => {
    const env = { NODE_ENV: 'production', SERVICE_CONSOLE_ACCESS_KEY: 'k' };
    expect(checkConsoleAccess({ headers: { 'x-service-dev': 'true' }, query: { dev: 'true' } }, env)).toEqual(DENIED);
  });

  it('passes the console key from the header or ?key=, in production or not', () => {
    for (const NODE_ENV of ['production', 'development']) {
      const env = { NODE_ENV, SERVICE_CONSOLE_ACCESS_KEY: 'the-key' };
      expect(checkConsoleAccess({ headers: { 'x-console-access-key': 'the-key' } }, env)).toEqual({ ok: true, via: 'key' });
      expect(checkConsoleAccess({ headers: {}, query: { key: 'the-key' } }, env)).toEqual({ ok: true, via: 'key' });
      expect(checkConsoleAccess({ headers: {}, query: { key: ['the-key', 'x'] } }, env)).toEqual({ ok: true, via: 'key' });
    }
  });

  it('refuses a wrong, longer, shorter or empty key', () => {
    const env = { NODE_ENV: 'production', SERVICE_CONSOLE_ACCESS_KEY: 'the-key' };
    for (const key of ['the-kez', 'the-key-', 'the-ke', '', 'THE-KEY']) {
      expect(checkConsoleAccess({ headers: { 'x-console-access-key': key } }, env)).toEqual(DENIED);
    }
  });

  it('always refuses in production when no key is set, whatever is sent', () => {
    const env = { NODE_ENV: 'production' };
    expect(checkConsoleAccess({ headers: { 'x-console-access-key': '' }, query: { key: '' } }, env)).toEqual(DENIED);
    expect(checkConsoleAccess({ headers: { 'x-console-access-key': 'undefined' } }, env)).toEqual(DENIED);
    expect(checkConsoleAccess({ headers: { 'x-console-access-key': 'x' } }, { NODE_ENV: 'production', SERVICE_CONSOLE_ACCESS_KEY: '' })).toEqual(DENIED);
  });
});

describe('constantTimeEqual', () => {
  it('is true exactly for equal strings, whatever their lengths', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
    expect(constantTimeEqual('é', 'é')).toBe(true);
  });
});

describe('queryValue', () => {
  it('reads the first value from objects and URLSearchParams, as text', () => {
    expect(queryValue({ a: ['x', 'y'] }, 'a')).toBe('x');
    expect(queryValue({ a: 5 }, 'a')).toBe('5');
    expect(queryValue({ a: { b: 1 } }, 'a')).toBeUndefined();
    expect(queryValue(new URLSearchParams('a=1&a=2'), 'a')).toBe('1');
    expect(queryValue(new URLSearchParams(''), 'a')).toBeUndefined();
    expect(queryValue(undefined, 'a')).toBeUndefined();
  });
});
