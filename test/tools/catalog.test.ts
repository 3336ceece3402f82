/**
 * The tool catalog: first-registration order across agents, their sub-agents, config-level and MCP
 * tools; one entry per name with every agent that has it; client-side tools kept for lookup but
 * left out of the listing; and the config's `tools` section.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agents/define-agent.js';
import type { ToolHolder } from '../../src/contract/agents-hooks.js';
import { createTool, type Tool } from '../../src/kernel/define-tool.js';
import { ToolCatalog, parseConfigTools, toolListItem } from '../../src/tools/catalog.js';

const tool = (name: string, execute = true) => createTool({ name, description: `${name} tool`, parameters: z.object({}), ...(execute ? { execute: () => name } : {}) });
const [a, b, c, d, e, clientOnly] = [tool('a'), tool('b'), tool('c'), tool('d'), tool('e'), tool('clientOnly', false)];
const bAgain = tool('b');

const shared = createAgent({ id: 'shared', name: 'Shared', instructions: 'x', tools: [c] });
const one = createAgent({ id: 'one', name: 'One', instructions: 'x', tools: [a, clientOnly], subAgents: [shared] });
const two = createAgent({ id: 'two', name: 'Two', instructions: 'x', tools: [bAgain, a], subAgents: [shared] });

const catalog = (extra: Partial<{ added: Map<ToolHolder, Tool[]>; configTools: Tool[]; mcpTools: Tool[] }> = {}) =>
  new ToolCatalog({
    agents: [one, two],
    toolsOf: (agent) => [...agent.tools, ...(extra.added?.get(agent) ?? [])],
    configTools: extra.configTools ?? [],
    mcpTools: extra.mcpTools ?? [],
  });

describe('ToolCatalog', () => {
  it('orders tools by first registration: agents with their sub-agents, then config, then MCP', () => {
    const cat = catalog({ configTools: [b, d], mcpTools: [e, a] });
    expect(cat.executable().map((x) => x.tool.name)).toEqual(['a', 'c', 'b', 'd', 'e']);
  });

  it('lists every agent having a tool of the name, each once, and runs the first registered object', () => {
    const cat = catalog({ configTools: [b] });
    expect(cat.get('a')!.agents).toEqual([
      { id: 'one', name: 'One' },
      { id: 'two', name: 'Two' },
    ]);
    expect(cat.get('c')!.agents).toEqual([{ id: 'shared', name: 'Shared' }]);
    expect(cat.get('b')!.tool).toBe(bAgain);
    expect(cat.get('b')!.agents).toEqual([{ id: 'two', name: 'Two' }]);
  });

  it("counts tools added to an agent (MCP) as the agent's", () => {
    const cat = catalog({ added: new Map([[two, [e]]]), mcpTools: [e] });
    expect(cat.get('e')!.agents).toEqual([{ id: 'two', name: 'Two' }]);
    expect(cat.executable().map((x) => x.tool.name)).toEqual(['a', 'c', 'b', 'e']);
  });

  it('keeps client-side tools out of the listing but findable', () => {
    const cat = catalog();
    expect(cat.executable().map((x) => x.tool.name)).not.toContain('clientOnly');
    expect(cat.get('clientOnly')!.tool.execute).toBeUndefined();
    expect(cat.get('missing')).toBeUndefined();
  });

  it('describes an entry in the shape of the /tools list', () => {
    const tagged = createTool({ id: 'tag-id', name: 'tagged', description: 'T', parameters: z.object({ q: z.string() }), tags: ['x'], execute: () => 1 });
    const cat = new ToolCatalog({ agents: [], toolsOf: () => [], configTools: [tagged], mcpTools: [] });
    expect(toolListItem(cat.get('tagged')!)).toEqual({
      id: 'tag-id',
      name: 'tagged',
      description: 'T',
      parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      status: 'ready',
      agents: [],
      tags: ['x'],
    });
  });
});

describe('parseConfigTools', () => {
  it('reads an array or the values of a record, in order', () => {
    expect(parseConfigTools(undefined)).toEqual([]);
    expect(parseConfigTools([a, b])).toEqual([a, b]);
    expect(parseConfigTools({ first: d, second: c })).toEqual([d, c]);
  });

  it('refuses anything that is not a createTool tool', () => {
    expect(() => parseConfigTools([a, { name: 'fake', execute: () => 1 }])).toThrow('config.tools must contain tools created with createTool()');
    expect(() => parseConfigTools('a')).toThrow('config.tools must be an array or an object of tools');
  });
});
