import { describe, expect, it } from 'vitest';
import { createCorsPolicy, originAllowed } from '../../src/http/cors.js';

describe('CORS policy', () => {
  it('allows every origin by default and echoes requested headers on preflight', () => {
    const p = createCorsPolicy(undefined)!;
    expect(p.responseHeaders('http://a.test')).toEqual([['Access-Control-Allow-Origin', '*']]);
    const pre = Object.fromEntries(p.preflightHeaders('http://a.test', 'x-custom'));
    expect(pre['Access-Control-Allow-Methods']).toBe('GET,HEAD,PUT,POST,DELETE,PATCH');
    expect(pre['Access-Control-Allow-Headers']).toBe('x-custom');
  });

  it('echoes the request origin when credentials are allowed', () => {
    const p = createCorsPolicy({ credentials: true })!;
    const h = Object.fromEntries(p.responseHeaders('http://a.test'));
    expect(h['Access-Control-Allow-Origin']).toBe('http://a.test');
    expect(h['Access-Control-Allow-Credentials']).toBe('true');
  });

  it('allows only listed origins and applies every option', () => {
    const p = createCorsPolicy({ origin: ['http://ok.test'], allowHeaders: ['a', 'b'], allowMethods: ['GET'], exposeHeaders: ['x-id'], maxAge: 600 })!;
    expect(p.responseHeaders('http://bad.test')).toEqual([]);
    const h = Object.fromEntries(p.responseHeaders('http://ok.test'));
    expect(h['Access-Control-Allow-Origin']).toBe('http://ok.test');
    expect(h['Access-Control-Expose-Headers']).toBe('x-id');
    const pre = Object.fromEntries(p.preflightHeaders('http://ok.test', 'zzz'));
    expect(pre).toMatchObject({ 'Access-Control-Allow-Methods': 'GET', 'Access-Control-Allow-Headers': 'a,b', 'Access-Control-Max-Age': '600' });
  });

  it('lets a function decide the origin', () => {
    const p = createCorsPolicy({ origin: (o) => (o.endsWith('.trusted') ? o : undefined) })!;
    expect(p.responseHeaders('http://x.trusted')[0]).toEqual(['Access-Control-Allow-Origin', 'http://x.trusted']);
    expect(p.responseHeaders('http://x.other')).toEqual([]);
  });

  it('is off entirely with cors: false', () => {
    expect(createCorsPolicy(false)).toBeUndefined();
  });
});

describe('origins allowed to call host-changing routes', () => {
  it("accepts no Origin and the server's own origin, normalising case and default ports", () => {
    const p = createCorsPolicy(undefined);
    expect(originAllowed(undefined, '127.0.0.1:3141', p)).toBe(true);
    expect(originAllowed('http://127.0.0.1:3141', '127.0.0.1:3141', p)).toBe(true);
    expect(originAllowed('https://Agents.Example', 'agents.example:443', p)).toBe(true);
    expect(originAllowed('http://agents.example', 'AGENTS.example', p)).toBe(true);
  });

  it('refuses other hosts, ports and schemes, null, garbage and a missing Host', () => {
    const p = createCorsPolicy(undefined);
    for (const origin of ['https://evil.example', 'http://127.0.0.1:3142', 'null', '', 'not a url', 'file://127.0.0.1:3141', 'http://127.0.0.1:3141.evil.example']) {
      expect(originAllowed(origin, '127.0.0.1:3141', p), origin).toBe(false);
    }
    expect(originAllowed('http://127.0.0.1:3141', undefined, p)).toBe(false);
    expect(originAllowed('http://127.0.0.1:3141', 'bad host/x', p)).toBe(false);
  });

  it('accepts origins the CORS config names (string, list or function), never through the default *', () => {
    expect(originAllowed('https://console.example', 'h:1', createCorsPolicy({ origin: 'https://console.example' }))).toBe(true);
    expect(originAllowed('https://console.example', 'h:1', createCorsPolicy({ origin: ['https://a.example', 'https://console.example'] }))).toBe(true);
    expect(originAllowed('https://console.example', 'h:1', createCorsPolicy({ origin: (o) => (o.endsWith('.example') ? o : null) }))).toBe(true);
    expect(originAllowed('https://evil.test', 'h:1', createCorsPolicy({ origin: (o) => (o.endsWith('.example') ? o : null) }))).toBe(false);
    expect(originAllowed('https://console.example', 'h:1', createCorsPolicy({ origin: '*' }))).toBe(false);
    expect(originAllowed('https://console.example', 'h:1', createCorsPolicy({ credentials: true }))).toBe(false);
    expect(originAllowed('https://console.example', 'h:1', createCorsPolicy(false))).toBe(false);
  });
});
