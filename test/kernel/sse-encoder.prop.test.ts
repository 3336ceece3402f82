import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeSseFrame } from '../../src/kernel/sse-encoder.js';

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

describe('SSE encoder', () => {
  it('frames event, id and one data line ending in a blank line', () => {
    expect(decode(encodeSseFrame('step-start', 3, { a: 1 }))).toBe('event: step-start\nid: 3\ndata: {"a":1}\n\n');
  });

  it('round-trips any JSON value through a single data line', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), (value, id) => {
        const text = decode(encodeSseFrame('e', id, value));
        const lines = text.split('\n');
        expect(lines.length).toBe(5);
        expect(lines[3]).toBe('');
        expect(JSON.parse(lines[2].slice('data: '.length))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });
});
