/**
 * Agent definitions and their listing shapes (docs/api-reference.md "Agent shapes") without a server: validation of
 * createAgent, the registry (array or record config, duplicate ids, model resolution at boot), the
 * `model` and `description` fallbacks, `isTelemetryEnabled`, and the agent card.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MockLanguageModelV3 } from 'ai/test';
import { createAgent } from '../../src/agents/define-agent.js';
import { createTool } from '../../src/kernel/define-tool.js';
import { AgentRegistry } from '../../src/agents/registry.js';
import { agentCard, agentDetail, agentListItem } from '../../src/agents/describe.js';

const tool = createTool({ name: 'lookup', description: 'Looks things up', parameters: z.object({ q: z.string() }), execute: ({ q }) => q });

describe('createAgent', () => {
  it.each([
    [{ id: 'has space', name: 'x', instructions: 'x' }, /id must be/],
    [{ id: 'ok', name: '', instructions: 'x' }, /name is required/],
    [{ id: 'ok', name: 'x', instructions: 3 }, /instructions must be a string or a function/],
    [{ id: 'ok', name: 'x', instructions: 'x', tools: [tool, tool] }, /two tools are named lookup/],
    [{ id: 'ok', name: 'x', instructions: 'x', tools: [{ name: 'raw' }] }, /createTool/],
    [{ id: 'ok', name: 'x', instructions: 'x', maxSteps: 0 }, /maxSteps must be an integer >= 1/],
    [{ id: 'ok', name: 'x', instructions: 'x', memory: {} }, /AgentMemoryHooks/],
  ])('refuses %j', (config, message) => {
    expect(() => createAgent(config as never)).toThrow(message);
  });

  it('defaults maxSteps to 5 and memory to null', () => {
    const a = createAgent({ id: 'a', name: 'A', instructions: 'x' });
    expect(a.maxSteps).toBe(5);
    expect(a.memory).toBeNull();
  });
});

describe('agent registry and shapes', () => {
  const env = { OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1' };
  const mock = new MockLanguageModelV3({ modelId: 'mock-1' });
  const described = createAgent({ id: 'described', name: 'Described', description: 'Configured text', instructions: 'Instructions text', model: 'openai-compatible/small', tools: [tool] });
  const plain = createAgent({ id: 'plain', name: 'Plain', instructions: 'Instructions text', model: mock });
  const dynamic = createAgent({ id: 'dynamic', name: 'Dynamic', instructions: () => 'x', model: () => 'demo' });
  const registry = new AgentRegistry({ one: described, two: plain, three: dynamic }, env);

  it('accepts a record of agents and keeps its order', () => {
    expect(registry.list().map((a) => a.id)).toEqual(['described', 'plain', 'dynamic']);
  });

  it('refuses duplicate ids and models it cannot resolve, at boot', () => {
    expect(() => new AgentRegistry([plain, plain], env)).toThrow('Two agents have the id plain');
    expect(() => new AgentRegistry([described], {})).toThrow(/OPENAI_COMPATIBLE_BASE_URL/);
  });

  it('labels models: provider/model, the model id of an instance, dynamic for a function, the demo label', () => {
    expect(registry.modelLabel(described)).toBe('openai-compatible/small');
    expect(registry.modelLabel(plain)).toBe('mock-1');
    expect(registry.modelLabel(dynamic)).toBe('dynamic');
    const d = createAgent({ id: 'd', name: 'D', instructions: 'x' });
    expect(new AgentRegistry([d], {}).modelLabel(d)).toBe('demo (offline)');
  });

  it('describes with the configured description, else the instructions, else Dynamic instructions', () => {
    expect(agentListItem(described, registry, {}).description).toBe('Configured text');
    expect(agentListItem(plain, registry, {}).description).toBe('Instructions text');
    expect(agentListItem(dynamic, registry, {}).description).toBe('Dynamic instructions');
    expect(agentDetail(dynamic, registry, {}).instructions).toBe('Dynamic instructions');
  });

  it('enables telemetry only with both service keys', () => {
    expect(agentListItem(plain, registry, {}).isTelemetryEnabled).toBe(false);
    expect(agentListItem(plain, registry, { SERVICE_PUBLIC_KEY: 'p' }).isTelemetryEnabled).toBe(false);
    expect(agentListItem(plain, registry, { SERVICE_PUBLIC_KEY: 'p', SERVICE_SECRET_KEY: 's' }).isTelemetryEnabled).toBe(true);
  });

  it('lists tools with JSON Schema parameters and details them by name', () => {
    expect(agentListItem(described, registry, {}).tools).toEqual([
      { id: 'lookup', name: 'lookup', description: 'Looks things up', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
    ]);
    expect(agentDetail(described, registry, {}).tools).toEqual(['lookup']);
  });

  it('builds the agent card with one skill per tool and the A2A endpoint under the given origin', () => {
    const card = agentCard(described, '9.9.9', 'https://agents.example');
    expect(card).toMatchObject({
      name: 'described',
      version: '9.9.9',
      capabilities: { streaming: true, pushNotifications: false },
      skills: [{ id: 'lookup', name: 'lookup', description: 'Looks things up', tags: ['tool'] }],
    });
    expect(card.url).toBe('https://agents.example/a2a/described');
    expect(card.supportedInterfaces).toEqual([{ url: 'https://agents.example/a2a/described', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }]);
  });
});
