import { describe, expect, it } from 'vitest';
import { mergeUserIntoBody } from '../../../src/http/auth/propagate.js';
import { userIdentity } from '../../../src/contract/routes.js';

const user = { id: 'u1', role: 'admin' };

describe('mergeUserIntoBody', () => {
  it('gives agents the user in context and the identity as memory and legacy userId, keeping other keys', () => {
    const body = { input: 'hi', options: { temperature: 0.2, context: { lang: 'fr' }, memory: { userId: 'mallory', conversationId: 'c1' }, userId: 'mallory' } };
    expect(mergeUserIntoBody('agent', body, user)).toEqual({
      input: 'hi',
      options: { temperature: 0.2, context: { lang: 'fr', user }, memory: { userId: 'u1', conversationId: 'c1' }, userId: 'u1' },
    });
  });

  it('never mutates the body it was given', () => {
    const body = { options: { context: { a: 1 } } };
    const copy = structuredClone(body);
    const merged = mergeUserIntoBody('agent', body, user);
    expect(body).toEqual(copy);
    expect(merged).not.toBe(body);
  });

  it('creates the containers when the body has none', () => {
    expect(mergeUserIntoBody('agent', {}, user)).toEqual({ options: { context: { user }, memory: { userId: 'u1' }, userId: 'u1' } });
    expect(mergeUserIntoBody('workflow', undefined, user)).toEqual({ options: { context: { user }, userId: 'u1' } });
    expect(mergeUserIntoBody('tool', null, user)).toEqual({ context: { user }, userId: 'u1' });
  });

  it('gives workflows the user in context and the identity as options.userId, without a memory envelope', () => {
    const body = { input: { n: 1 }, options: { userId: 'mallory', workflowState: { s: 1 } } };
    expect(mergeUserIntoBody('workflow', body, user)).toEqual({ input: { n: 1 }, options: { userId: 'u1', workflowState: { s: 1 }, context: { user } } });
  });

  it('gives tools the user in context and the identity as userId', () => {
    const body = { input: { q: 'x' }, context: { trace: 't' }, userId: 'mallory', conversationId: 'c' };
    expect(mergeUserIntoBody('tool', body, user)).toEqual({ input: { q: 'x' }, context: { trace: 't', user }, userId: 'u1', conversationId: 'c' });
  });

  it('falls back to sub for the identity and stringifies numeric ids', () => {
    expect(userIdentity({ sub: 's1' })).toBe('s1');
    expect(userIdentity({ id: 7, sub: 's1' })).toBe('7');
    expect(userIdentity({ id: '', sub: 's1' })).toBe('s1');
    expect(userIdentity({ name: 'x' })).toBeUndefined();
  });

  it('sets only the context user when the user has no identity', () => {
    const body = { options: { userId: 'client-picked' } };
    expect(mergeUserIntoBody('agent', body, { name: 'anon' })).toEqual({ options: { userId: 'client-picked', context: { user: { name: 'anon' } } } });
  });

  it('leaves the body as sent without a user, or when a container has the wrong type (for validation to reject)', () => {
    const body = { options: { a: 1 } };
    expect(mergeUserIntoBody('agent', body, undefined)).toBe(body);
    expect(mergeUserIntoBody('agent', { options: 'x' }, user)).toEqual({ options: 'x' });
    expect(mergeUserIntoBody('agent', { options: { context: [1] } }, user)).toEqual({ options: { context: [1] } });
    expect(mergeUserIntoBody('agent', { options: { memory: 'm' } }, user)).toEqual({ options: { memory: 'm' } });
    expect(mergeUserIntoBody('tool', { context: 5 }, user)).toEqual({ context: 5 });
    expect(mergeUserIntoBody('tool', [1, 2], user)).toEqual([1, 2]);
  });
});
