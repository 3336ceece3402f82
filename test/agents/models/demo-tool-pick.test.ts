/** How the demo model picks one of the agent's tools from a prompt and fills the call's arguments. */
import { describe, expect, it } from 'vitest';
import { fillArguments, pickTool, wordsOf, type OfferedTool } from '../../../src/agents/models/demo-tool-pick.js';

const convert: OfferedTool = {
  name: 'convertCurrency',
  description: 'Convert an amount of money from one currency to another',
  inputSchema: {
    type: 'object',
    properties: { amount: { type: 'number' }, from: { type: 'string', enum: ['EUR', 'USD'] }, to: { type: 'string', enum: ['EUR', 'USD'] } },
    required: ['amount', 'from', 'to'],
  },
};
const order: OfferedTool = {
  name: 'lookup_order',
  description: 'Look up the status of a customer order',
  inputSchema: { type: 'object', properties: { orderId: { type: 'string' }, count: { type: 'integer' }, express: { type: 'boolean' } }, required: ['orderId'] },
};
const weather: OfferedTool = { name: 'getWeather', description: 'Get the current weather for a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

describe('pickTool', () => {
  it('prefers a tool the prompt names, then the one sharing most description words, else none', () => {
    expect(pickTool([convert, order], 'call lookup_order please')).toBe(order);
    expect(pickTool([convert, order], 'What is the status of my order?')).toBe(order);
    expect(pickTool([convert, order], 'converted money, how much?')).toBe(convert);
    expect(pickTool([convert, order, weather], 'hello, how are you?')).toBeUndefined();
  });

  it('splits camelCase and snake_case names into words', () => {
    expect(wordsOf('convertCurrency lookup_order')).toEqual(['convert', 'currency', 'lookup', 'order']);
  });
});

describe('fillArguments', () => {
  it('takes values written after property names, matching enums case-insensitively', () => {
    expect(fillArguments(convert, 'convert amount 12.5 from usd to EUR')).toEqual({ amount: 12.5, from: 'USD', to: 'EUR' });
  });

  it('gives an unnamed number property the next number of the prompt, and keeps integers whole', () => {
    expect(fillArguments(convert, 'convert 250 from EUR to USD')).toMatchObject({ amount: 250 });
    expect(fillArguments(order, 'orderId: "A 17" count 2.5 express yes')).toMatchObject({ orderId: 'A 17', express: true });
    expect(fillArguments(order, 'orderId: "A 17" count 2.5')).not.toHaveProperty('count', 2.5);
  });

  it('fills a location from the city the prompt names, Paris when it names none', () => {
    expect(fillArguments(weather, 'weather in Zürich?')).toEqual({ city: 'Zürich' });
    expect(fillArguments(weather, 'what is the weather like?')).toEqual({ city: 'Paris' });
  });
});
