/**
 * Properties of the options mapping (docs/api-reference.md "Generation options"): for any combination of
 * legacy top-level memory fields and `memory` envelope fields, the envelope wins key by key, a legacy
 * value is used when the envelope lacks that key, and every unset value falls back to the agent's
 * configuration, then to the server default. The request schema accepts every generated request.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { API_DEFAULTS, resolveCallOptions } from '../../src/agents/call-options.js';
import { TextOptions } from '../../src/agents/request-schema.js';

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
/** doubles without -0 (JSON turns it into 0) */
const dbl = (min: number, max: number) => fc.double({ min, max, noNaN: true }).map((x) => x + 0);
const semantic = fc.record(
  {
    enabled: maybe(fc.boolean()),
    semanticLimit: maybe(fc.integer({ min: 1, max: 50 })),
    semanticThreshold: maybe(dbl(0, 1)),
    mergeStrategy: maybe(fc.constantFrom('prepend', 'append', 'interleave')),
  },
  { requiredKeys: [] },
);
const persistence = fc.record({ mode: maybe(fc.constantFrom('step', 'finish')), debounceMs: maybe(fc.integer({ min: 0, max: 5000 })), flushOnToolResult: maybe(fc.boolean()) }, { requiredKeys: [] });
const legacy = fc.record(
  {
    userId: maybe(fc.string({ minLength: 1, maxLength: 8 })),
    conversationId: maybe(fc.string({ minLength: 1, maxLength: 8 })),
    contextLimit: maybe(fc.integer({ min: 0, max: 100 })),
    semanticMemory: maybe(semantic),
    conversationPersistence: maybe(persistence),
  },
  { requiredKeys: [] },
);
const envelope = fc.record(
  {
    userId: maybe(fc.string({ minLength: 1, maxLength: 8 })),
    conversationId: maybe(fc.string({ minLength: 1, maxLength: 8 })),
    options: maybe(
      fc.record(
        { contextLimit: maybe(fc.integer({ min: 0, max: 100 })), readOnly: maybe(fc.boolean()), semanticMemory: maybe(semantic), conversationPersistence: maybe(persistence) },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);
const generation = fc.record(
  {
    temperature: maybe(dbl(0, 1)),
    topP: maybe(dbl(0, 1)),
    frequencyPenalty: maybe(dbl(0, 2)),
    presencePenalty: maybe(dbl(0, 2)),
    maxOutputTokens: maybe(fc.integer({ min: 1, max: 10_000 })),
    maxSteps: maybe(fc.integer({ min: 1, max: 20 })),
  },
  { requiredKeys: [] },
);
const agentDefaults = fc.record(
  {
    maxSteps: fc.integer({ min: 1, max: 20 }),
    temperature: maybe(dbl(0, 1)),
    topP: maybe(dbl(0, 1)),
    maxOutputTokens: maybe(fc.integer({ min: 1, max: 10_000 })),
    frequencyPenalty: maybe(dbl(0, 2)),
    presencePenalty: maybe(dbl(0, 2)),
  },
  { requiredKeys: ['maxSteps'] },
);

/** Drops undefined values so the request looks like parsed JSON. */
const clean = (v: unknown): any => JSON.parse(JSON.stringify(v));
const first = <T>(...vs: Array<T | undefined>) => vs.find((v) => v !== undefined);

describe('agent call options mapping', () => {
  it('lets the memory envelope win over legacy fields key by key and applies the defaults otherwise', () => {
    fc.assert(
      fc.property(legacy, maybe(envelope), generation, agentDefaults, (leg, env, gen, agent) => {
        const raw = clean({ ...leg, ...gen, ...(env ? { memory: env } : {}) });
        const parsed = TextOptions.parse(raw);
        const r = resolveCallOptions(parsed, agent);
        const eo = env?.options;
        expect(r.memory.userId).toBe(first(env?.userId, leg.userId));
        expect(r.memory.conversationId).toBe(first(env?.conversationId, leg.conversationId));
        expect(r.memory.contextLimit).toBe(first(eo?.contextLimit, leg.contextLimit, API_DEFAULTS.contextLimit));
        expect(r.memory.readOnly).toBe(eo?.readOnly ?? false);
        const es = eo?.semanticMemory;
        const ls = leg.semanticMemory;
        expect(r.memory.semanticMemory.enabled).toBe(first(es?.enabled, ls?.enabled));
        expect(r.memory.semanticMemory.semanticLimit).toBe(first(es?.semanticLimit, ls?.semanticLimit, API_DEFAULTS.semanticLimit));
        expect(r.memory.semanticMemory.semanticThreshold).toBe(first(es?.semanticThreshold, ls?.semanticThreshold, API_DEFAULTS.semanticThreshold));
        expect(r.memory.semanticMemory.mergeStrategy).toBe(first(es?.mergeStrategy, ls?.mergeStrategy, 'append'));
        const ep = eo?.conversationPersistence;
        const lp = leg.conversationPersistence;
        expect(r.memory.conversationPersistence).toEqual({
          mode: first(ep?.mode, lp?.mode, 'step'),
          debounceMs: first(ep?.debounceMs, lp?.debounceMs, 200),
          flushOnToolResult: first(ep?.flushOnToolResult, lp?.flushOnToolResult, true),
        });
        expect(r.temperature).toBe(first(gen.temperature, agent.temperature, 0.7));
        expect(r.topP).toBe(first(gen.topP, agent.topP, 1));
        expect(r.frequencyPenalty).toBe(first(gen.frequencyPenalty, agent.frequencyPenalty, 0));
        expect(r.presencePenalty).toBe(first(gen.presencePenalty, agent.presencePenalty, 0));
        expect(r.maxOutputTokens).toBe(first(gen.maxOutputTokens, agent.maxOutputTokens, 4000));
        expect(r.maxSteps).toBe(gen.maxSteps ?? agent.maxSteps);
        expect(r.onDisconnect).toBe('cancel');
        expect(r.context).toEqual({});
      }),
      { numRuns: 300 },
    );
  });

  it('gives the server defaults when no options are sent', () => {
    const r = resolveCallOptions(undefined, { maxSteps: 5 });
    expect(r).toEqual({
      memory: {
        contextLimit: 10,
        readOnly: false,
        semanticMemory: { semanticLimit: 5, semanticThreshold: 0.7, mergeStrategy: 'append' },
        conversationPersistence: { mode: 'step', debounceMs: 200, flushOnToolResult: true },
      },
      maxSteps: 5,
      temperature: 0.7,
      maxOutputTokens: 4000,
      topP: 1,
      frequencyPenalty: 0,
      presencePenalty: 0,
      context: {},
      onDisconnect: 'cancel',
      resumableStream: false,
    });
  });

  it('makes resumable streams continue after a disconnect whatever onDisconnect says', () => {
    fc.assert(
      fc.property(fc.constantFrom('cancel', 'continue', undefined), (onDisconnect) => {
        const r = resolveCallOptions(TextOptions.parse(clean({ resumableStream: true, onDisconnect })), { maxSteps: 1 });
        expect(r.onDisconnect).toBe('continue');
      }),
    );
  });
});
