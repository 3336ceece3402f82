/**
 * What makes the OpenAPI document usable from the explorer: the registered ids a path's `id` can take,
 * and request bodies a person would send (a question for an agent, a workflow's own example input),
 * rather than schema samples. Read from the running modules each time the document is built.
 */
import type { ZodType } from 'zod';
import { toJsonSchema } from '../kernel/json-schema.js';
import type { ServerModule } from '../contract/server-module.js';
import type { AgentsModule } from '../agents/module.js';
import type { WorkflowsModule } from '../workflows/module.js';
import type { ToolsModule } from '../tools/module.js';
import { toolParametersJsonSchema } from '../tools/define-tool.js';
import { sampleFromJsonSchema } from '../agents/models/json-schema-sample.js';

type Schema = Record<string, unknown>;

export interface DocsCatalog {
  agents: string[];
  workflows: Array<{ id: string; input?: Schema; resume?: Schema }>;
  tools: Array<{ name: string; parameters: Schema }>;
}

const toJson = (schema: ZodType | undefined): Schema | undefined => (schema ? toJsonSchema(schema, { io: 'input' }) : undefined);

export function docsCatalog(modules: ReadonlyMap<string, ServerModule>): DocsCatalog {
  const agents = modules.get('agents') as AgentsModule | undefined;
  const workflows = modules.get('workflows') as WorkflowsModule | undefined;
  const tools = modules.get('tools') as ToolsModule | undefined;
  return {
    agents: agents?.registry.list().map((a) => a.id) ?? [],
    workflows: workflows ? [...workflows.engine.workflows.values()].map((w) => ({ id: w.id, input: toJson(w.input), resume: toJson(w.resumeSchema) })) : [],
    tools: tools?.catalog().executable().map((e) => ({ name: e.tool.name, parameters: toolParametersJsonSchema(e.tool) })) ?? [],
  };
}

/** The ids a path parameter can take: agents under /agents, workflows under /workflows, tools under /tools. */
export function pathParamValues(path: string, param: string, catalog: DocsCatalog): string[] | undefined {
  if (param === 'id' && path.startsWith('/agents/')) return catalog.agents;
  if (param === 'id' && path.startsWith('/workflows/')) return catalog.workflows.map((w) => w.id);
  if (param === 'name' && path.startsWith('/tools/')) return catalog.tools.map((t) => t.name);
  return undefined;
}

/**
 * A value for a schema a person would recognise: the schema's own `examples`/`default`, the value a
 * description names ("The city, e.g. Paris" → Paris), else a valid sample.
 */
function exampleFromJsonSchema(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object') return sampleFromJsonSchema(schema);
  const s = schema as Schema;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ('default' in s) return s.default;
  const named = typeof s.description === 'string' ? /\be\.g\.?,?\s*([^,;)]+)/i.exec(s.description)?.[1]?.trim() : undefined;
  if (named && (s.type === 'string' || s.type === undefined)) return named;
  if (s.type === 'object' && s.properties && typeof s.properties === 'object') {
    const base = sampleFromJsonSchema(schema);
    const out: Record<string, unknown> = base && typeof base === 'object' && !Array.isArray(base) ? { ...(base) } : {};
    for (const [k, sub] of Object.entries(s.properties as Record<string, unknown>)) if (k in out) out[k] = exampleFromJsonSchema(sub);
    return out;
  }
  return sampleFromJsonSchema(schema);
}

type Examples = Record<string, { summary: string; value: unknown }>;

const TEXT_EXAMPLES: Examples = {
  question: { summary: 'Ask a question', value: { input: 'Hello! What can you do?' } },
  conversation: {
    summary: 'Continue a remembered conversation',
    value: { input: 'And what did I ask you before?', options: { memory: { userId: 'user-1', conversationId: 'conversation-1' } } },
  },
};

const OBJECT_EXAMPLES: Examples = {
  object: {
    summary: 'Ask for a structured answer',
    value: {
      input: 'Describe Paris for a travel guide',
      schema: { type: 'object', properties: { city: { type: 'string' }, summary: { type: 'string' }, sights: { type: 'array', items: { type: 'string' } } }, required: ['city', 'summary'] },
    },
  },
};

/** Request-body examples of a route, or undefined to leave the schema alone. */
export function requestExamples(method: string, path: string, catalog: DocsCatalog): Examples | undefined {
  if (method !== 'POST') return undefined;
  if (/^\/agents\/:id\/(text|stream|chat)$/.test(path)) return TEXT_EXAMPLES;
  if (/^\/agents\/:id\/(object|stream-object)$/.test(path)) return OBJECT_EXAMPLES;
  const per = <T>(items: T[], key: (t: T) => string, value: (t: T) => unknown): Examples | undefined =>
    items.length === 0 ? undefined : Object.fromEntries(items.map((t) => [key(t), { summary: key(t), value: value(t) }]));
  if (/^\/workflows\/:id\/(execute|stream)$/.test(path)) return per(catalog.workflows, (w) => w.id, (w) => ({ input: exampleFromJsonSchema(w.input ?? { type: 'object' }) }));
  if (path === '/workflows/:id/executions/:executionId/resume') {
    return per(
      catalog.workflows.filter((w) => w.resume),
      (w) => w.id,
      (w) => ({ resumeData: exampleFromJsonSchema(w.resume) }),
    );
  }
  if (path === '/tools/:name/execute') return per(catalog.tools, (t) => t.name, (t) => ({ input: exampleFromJsonSchema(t.parameters) }));
  return undefined;
}
