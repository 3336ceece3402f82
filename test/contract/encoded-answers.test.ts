import { describe, expect, it } from 'vitest';
import { EncodedAnswers, describedStateChanged } from '../../src/contract/encoded-answers.js';

describe('encoded answers of registry GETs', () => {
  it('encodes the envelope the edge would send, once, and reuses the bytes', () => {
    const answers = new EncodedAnswers();
    const source = {};
    let builds = 0;
    const data = [{ id: 'assistant', name: 'Assistant' }];
    const build = () => (builds++, data);
    const first = answers.answer('', source, build);
    const second = answers.answer('', source, build);
    expect(builds).toBe(1);
    expect(second).toBe(first);
    expect(first).toMatchObject({ kind: 'body', status: 200, contentType: 'application/json' });
    expect(Buffer.from((first as { body: Uint8Array }).body).toString()).toBe(JSON.stringify({ success: true, data }));
  });

  it('encodes again after the described state changed or the registry object was replaced', () => {
    const answers = new EncodedAnswers();
    let version = 1;
    const build = () => ({ version });
    const body = (r: unknown) => Buffer.from((r as { body: Uint8Array }).body).toString();
    const source = {};
    expect(body(answers.answer('', source, build))).toContain('"version":1');
    version = 2;
    expect(body(answers.answer('', source, build))).toContain('"version":1');
    describedStateChanged();
    expect(body(answers.answer('', source, build))).toContain('"version":2');
    version = 3;
    expect(body(answers.answer('', {}, build))).toContain('"version":3');
  });

  it('encodes a bare answer without the envelope, byte for byte what the edge would send', () => {
    const answers = new EncodedAnswers();
    const card = { name: 'assistant', skills: [{ id: 'getWeather' }] };
    const r = answers.answer('a2a:assistant', {}, () => card, true);
    expect(r).toMatchObject({ kind: 'body', status: 200, contentType: 'application/json' });
    expect(Buffer.from((r as { body: Uint8Array }).body).toString()).toBe(JSON.stringify(card));
  });

  it('keeps nothing for a key whose build throws (an unknown id answers its error every time)', () => {
    const answers = new EncodedAnswers();
    const source = {};
    let calls = 0;
    const missing = () => {
      calls++;
      throw new Error('Agent nope not found');
    };
    expect(() => answers.answer(':nope', source, missing)).toThrow('not found');
    expect(() => answers.answer(':nope', source, missing)).toThrow('not found');
    expect(calls).toBe(2);
  });
});
