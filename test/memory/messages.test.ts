/**
 * Message normalisation (docs/api-reference.md "Memory routes") and the conversion of stored messages back into model
 * messages for agents.
 */
import { describe, expect, it } from 'vitest';
import { normalizeMessage, parseMessageInput, textOf, toMessage, toModelMessages } from '../../src/memory/messages.js';
import type { StoredMessage } from '../../src/memory/types.js';

const NOW = '2025-01-01T00:00:00.000Z';
const stored = (m: Partial<StoredMessage> & Pick<StoredMessage, 'role' | 'parts'>): StoredMessage => ({ id: 'x', metadata: {}, createdAt: NOW, ...m });

describe('normalizeMessage', () => {
  it('turns a string content into one text part and generates a UUID when the id is missing', () => {
    const { message, generated } = normalizeMessage(parseMessageInput({ role: 'user', content: 'hi' }, 'm'), NOW);
    expect(generated).toBe(true);
    expect(message).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), role: 'user', parts: [{ type: 'text', text: 'hi' }], metadata: {}, createdAt: NOW });
  });

  it('keeps a part array as parts, the given id, and a createdAt from the message or its metadata', () => {
    const parts = [
      { type: 'text', text: 'a' },
      { type: 'tool-call', toolCallId: 't', toolName: 'x', input: {} },
    ];
    const a = normalizeMessage(parseMessageInput({ id: 'k', role: 'assistant', content: parts, createdAt: '2024-05-06T07:08:09Z' }, 'm'), NOW);
    expect(a.generated).toBe(false);
    expect(a.message).toMatchObject({ id: 'k', parts, createdAt: '2024-05-06T07:08:09.000Z' });
    const b = normalizeMessage(parseMessageInput({ role: 'user', parts: [{ type: 'text', text: 'b' }], metadata: { createdAt: '2023-01-01T00:00:00.000Z', tag: 1 } }, 'm'), NOW);
    expect(b.message).toMatchObject({ createdAt: '2023-01-01T00:00:00.000Z', metadata: { tag: 1 } });
  });

  it('names the failing field of a bad message', () => {
    expect(() => parseMessageInput({ role: 'user', content: 5 }, 'messages.2')).toThrow(/^Invalid request: messages\.2\.content: /);
    expect(() => parseMessageInput({ role: 'user', id: '' }, 'messages.0')).toThrow(/^Invalid request: messages\.0\.id: must not be empty/);
  });
});

describe('reading messages', () => {
  it('concatenates the text parts into content and repeats createdAt in metadata', () => {
    const m = toMessage(
      stored({
        role: 'assistant',
        parts: [
          { type: 'text', text: 'Hello, ' },
          { type: 'reasoning', text: 'hidden' },
          { type: 'text', text: 'world' },
        ],
        metadata: { k: 'v' },
      }),
    );
    expect(m.content).toBe('Hello, world');
    expect(m.metadata).toEqual({ k: 'v', createdAt: NOW });
    expect(textOf([])).toBe('');
  });
});

describe('toModelMessages', () => {
  it('gives text messages as strings and keeps paired tool calls and results', () => {
    const out = toModelMessages([
      stored({ role: 'user', parts: [{ type: 'text', text: 'weather?' }] }),
      stored({ role: 'assistant', parts: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'getWeather', input: { city: 'Oslo' } }] }),
      stored({ role: 'tool', parts: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'getWeather', output: { type: 'json', value: { t: 3 } } }] }),
      stored({ role: 'assistant', parts: [{ type: 'text', text: 'It is 3°C.' }] }),
    ]);
    expect(out).toEqual([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'getWeather', input: { city: 'Oslo' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'getWeather', output: { type: 'json', value: { t: 3 } } }] },
      { role: 'assistant', content: [{ type: 'text', text: 'It is 3°C.' }] },
    ]);
  });

  it('drops a tool call whose result was cut off by the history window, and wraps raw outputs', () => {
    const out = toModelMessages([
      stored({
        role: 'assistant',
        parts: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool-call', toolCallId: 'lost', toolName: 'x', input: {} },
        ],
      }),
      stored({ role: 'assistant', parts: [{ type: 'tool-x', toolCallId: 'ui', state: 'output-available', input: { a: 1 }, output: 'done' }] }),
    ]);
    expect(out).toEqual([
      { role: 'assistant', content: [{ type: 'text', text: 'Let me check.' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'ui', toolName: 'x', input: { a: 1 } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'ui', toolName: 'x', output: { type: 'text', value: 'done' } }] },
    ]);
  });
});
