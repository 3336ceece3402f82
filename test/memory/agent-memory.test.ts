/**
 * The agents' memory hooks (`agentMemory()`) on a memory stack over the in-memory log: step saves
 * debounced and flushed on tool results, reads that flush what is pending, a chat client's resent
 * thread stored once, the lexical embedder's behaviour, and the description of the agent's memory.
 */
import type { ModelMessage } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResolvedPersistence, SaveMessagesArgs } from '../../src/contract/memory-hooks.js';
import { AgentMemory } from '../../src/memory/agent-memory.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { until } from '../helpers/until.js';
import { describeAgentMemory } from '../../src/memory/config.js';
import { LexicalEmbedder } from '../../src/memory/embedder.js';
import { memoryHarness, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const scope = { agentId: 'a', resourceId: 'a', userId: 'u', conversationId: 'c' };
const step: ResolvedPersistence = { mode: 'step', debounceMs: 40, flushOnToolResult: true };
const save = (mem: AgentMemory, messages: ModelMessage[], phase: SaveMessagesArgs['phase'], extra: Partial<SaveMessagesArgs> = {}) =>
  mem.saveMessages({ ...scope, messages, phase, persistence: step, ...extra });
const stored = async () => (await h!.store.listMessages('c', {}, false).catch(() => [])).map((m) => `${m.role}:${m.content}`);

let clock = new ManualClock();

async function setup() {
  clock = new ManualClock();
  const mem = new AgentMemory({ workingMemory: true }, clock);
  h = await memoryHarness({ agents: [{ id: 'a', memory: mem }] });
  return mem;
}

describe('agent memory saves', () => {
  it('writes the input at once, creating the conversation, and debounces step saves', async () => {
    const mem = await setup();
    await save(mem, [{ role: 'user', content: 'hi' }], 'input');
    const conv = await h!.store.getConversation('c', false);
    expect(conv).toMatchObject({ userId: 'u', resourceId: 'a', title: expect.stringMatching(/^New Chat /) });
    await save(mem, [{ role: 'assistant', content: 'step one' }], 'step');
    await save(mem, [{ role: 'assistant', content: 'step two' }], 'step');
    expect(await stored()).toEqual(['user:hi']);
    clock.advance(39);
    expect(await stored()).toEqual(['user:hi']);
    // one write for the burst, once the debounce (40 ms from the last step) has passed
    clock.advance(1);
    await until(async () => (await stored()).length === 3, 'the debounced write');
    expect(await stored()).toEqual(['user:hi', 'assistant:step one', 'assistant:step two']);
  });

  it('flushes at once on a tool result, and on any read of the conversation', async () => {
    const mem = await setup();
    await save(mem, [{ role: 'user', content: 'go' }], 'input');
    await save(mem, [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 't', toolName: 'x', output: { type: 'json', value: 1 } }] }], 'step', { hasToolResult: true });
    expect((await stored()).length).toBe(2);
    await save(mem, [{ role: 'assistant', content: 'pending' }], 'step');
    // a store read (as the HTTP routes do) waits for the agent's pending write
    expect((await h!.store.listMessages('c')).map((m) => m.content).at(-1)).toBe('pending');
  });

  it('stores a resent chat thread once: only the messages after what is already stored', async () => {
    const mem = await setup();
    await save(mem, [{ role: 'user', content: 'one' }], 'input');
    await save(mem, [{ role: 'assistant', content: 'reply one' }], 'finish');
    await save(
      mem,
      [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'reply one' },
        { role: 'user', content: 'two' },
      ],
      'input',
    );
    expect(await stored()).toEqual(['user:one', 'assistant:reply one', 'user:two']);
  });

  it('refuses to write into another user’s conversation and to load context from it (404, before any model call)', async () => {
    const mem = await setup();
    await h!.store.createConversation({ id: 'c', resourceId: 'a', userId: 'owner' });
    await h!.store.appendMessages('c', 'owner', [{ role: 'user', content: 'private' }]);
    await expect(save(mem, [{ role: 'user', content: 'intrude' }], 'input')).rejects.toThrow('userId does not match conversation c');
    const load = mem.loadContext({
      ...scope,
      input: [{ role: 'user', content: 'private?' }],
      contextLimit: 10,
      semanticMemory: { enabled: false, semanticLimit: 5, semanticThreshold: 0.7, mergeStrategy: 'append' },
      signal: new AbortController().signal,
    });
    await expect(load).rejects.toMatchObject({ status: 404, message: 'Conversation not found: c' });
  });
});

describe('describing agent memory', () => {
  it('describes storage, working memory, vectors and embedder, or null without memory', () => {
    expect(describeAgentMemory('a', false, {})).toBeNull();
    expect(describeAgentMemory('a', undefined, undefined)).toBeNull();
    const d = describeAgentMemory('a', { workingMemory: { enabled: true, scope: 'user', template: '# T' } }, { embedder: 'builtin' })!;
    expect(d).toMatchObject({
      available: true,
      status: 'idle',
      resourceId: 'a',
      config: {
        resourceId: 'a',
        workingMemory: { enabled: true, scope: 'user', format: 'markdown', hasTemplate: true, hasSchema: false },
        vectorDB: { adapter: 'InProcessVectorIndex', dimension: 384 },
        embeddingModel: { model: 'builtin-lexical', dimension: 384 },
      },
    });
    expect(describeAgentMemory('a', true, { embedder: false })!.config).toMatchObject({ vectorDB: null, embeddingModel: null, workingMemory: null });
    // an agent without its own option inherits a configured global memory
    expect(describeAgentMemory('a', undefined, { workingMemory: true })!.config.workingMemory).toMatchObject({ enabled: true });
  });
});

describe('the lexical embedder', () => {
  const e = new LexicalEmbedder();
  const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

  it('is deterministic and L2-normalised in 384 dimensions', () => {
    const a = e.embedOne('The quick brown fox');
    expect(a.length).toBe(384);
    expect(Array.from(a)).toEqual(Array.from(e.embedOne('the QUICK brown fox')));
    expect(cos(a, a)).toBeCloseTo(1, 5);
  });

  it('scores texts sharing words and word pieces above unrelated ones', () => {
    const q = e.embedOne('favourite programming languages');
    const related = e.embedOne('my favourite language for programming is Rust');
    const unrelated = e.embedOne('the weather in Paris is mild today');
    expect(cos(q, related)).toBeGreaterThan(cos(q, unrelated) + 0.2);
  });
});
