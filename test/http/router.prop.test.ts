import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PathTrie, Router } from '../../src/http/router.js';
import type { RouteDef } from '../../src/contract/routes.js';

const route = (method: RouteDef['method'], path: string): RouteDef => ({ method, path, auth: 'management', summary: path, tags: [], handler: () => ({ kind: 'json', data: path }) });

describe('router', () => {
  it('prefers a static segment over a parameter at the same depth', () => {
    const r = new Router([route('GET', '/workflows/:id'), route('GET', '/workflows/executions')]);
    expect(r.match('GET', '/workflows/executions')?.route.path).toBe('/workflows/executions');
    expect(r.match('GET', '/workflows/echo')?.params).toEqual({ id: 'echo' });
  });

  it('backtracks to a parameter branch when the static branch dead-ends', () => {
    const r = new Router([route('GET', '/a/static/x'), route('GET', '/a/:p/y')]);
    expect(r.match('GET', '/a/static/y')?.params).toEqual({ p: 'static' });
  });

  it('answers nothing for another method, a trailing slash or an empty segment', () => {
    const r = new Router([route('GET', '/agents/:id')]);
    expect(r.match('POST', '/agents/a')).toBeUndefined();
    expect(r.match('GET', '/agents/a/')).toBeUndefined();
    expect(r.match('GET', '/agents/')).toBeUndefined();
  });

  it('decodes percent-encoded parameters', () => {
    const r = new Router([route('GET', '/agents/:id')]);
    expect(r.match('GET', '/agents/my%20agent')?.params.id).toBe('my agent');
  });

  it('rejects a built-in route registered twice but skips a shadowing custom route', () => {
    const r = new Router([route('GET', '/x')]);
    expect(() => r.add(route('GET', '/x'))).toThrow(/twice/);
    expect(r.add({ ...route('GET', '/x'), custom: true })).toBe(false);
  });

  it('matches every concrete path generated from a pattern and recovers its parameters', () => {
    const seg = fc.stringMatching(/^[a-z][a-z0-9-]{0,6}$/);
    fc.assert(
      fc.property(fc.array(fc.record({ param: fc.boolean(), name: seg }), { minLength: 1, maxLength: 5 }), fc.array(seg, { minLength: 5, maxLength: 5 }), (parts, values) => {
        const names = new Set<string>();
        const pattern = '/' + parts.map((p, i) => (p.param ? `:p${i}` : p.name)).join('/');
        parts.forEach((p, i) => p.param && names.add(`p${i}`));
        const concrete = '/' + parts.map((p, i) => (p.param ? values[i] : p.name)).join('/');
        const trie = new PathTrie<string>();
        trie.insert(pattern, pattern);
        const m = trie.match(concrete);
        expect(m?.value).toBe(pattern);
        for (const n of names) expect(m!.params[n]).toBe(values[Number(n.slice(1))]);
      }),
    );
  });
});
