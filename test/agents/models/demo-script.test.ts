import { describe, expect, it } from 'vitest';
import { countWords, lastUserText, parseCity, splitWords } from '../../../src/agents/models/demo-script.js';

describe('demo script helpers', () => {
  it('parses the capitalised word after in, for or at as the city', () => {
    expect(parseCity('What is the weather in Berlin?')).toBe('Berlin');
    expect(parseCity('weather for Tokyo please')).toBe('Tokyo');
    expect(parseCity('weather at the moment in Rome')).toBe('Rome');
    expect(parseCity('In Zürich, is it cold?')).toBe('Zürich');
    expect(parseCity('weather in berlin')).toBeUndefined();
    expect(parseCity('within Berlin')).toBeUndefined();
  });

  it('splits text into word pieces that join back to the exact text', () => {
    expect(splitWords('You said: hi')).toEqual(['You', ' said:', ' hi']);
    expect(splitWords('  lead\nand  trail  ')).toEqual(['  lead', '\nand', '  trail  ']);
    expect(splitWords('')).toEqual([]);
    const text = 'a\tb  c \u00a0d';
    expect(splitWords(text).join('')).toBe(text);
  });

  it('counts whitespace-separated words', () => {
    expect(countWords('')).toBe(0);
    expect(countWords('  one two\nthree  ')).toBe(3);
  });

  it('reads the text of the last user message only', () => {
    expect(
      lastUserText([
        { role: 'user', content: [{ type: 'text', text: 'old' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'new' },
            { type: 'file', data: 'AA==', mediaType: 'image/png' },
            { type: 'text', text: 'line' },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'reply' }] },
      ]),
    ).toBe('new\nline');
    expect(lastUserText([{ role: 'system', content: 'sys' }])).toBe('');
  });
});
