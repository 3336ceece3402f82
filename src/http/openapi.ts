/**
 * The OpenAPI 3.1 document, derived from the route table (decisions.md §2): every built-in route and
 * every custom route, paths written `{param}`, request/response schemas from zod via z.toJSONSchema.
 */
import type { ZodType } from 'zod';
import type { RouteDef } from '../contract/routes.js';
import { toJsonSchema } from '../shared/json-schema.js';

export const API_TITLE = 'Agent and Workflow Server API';

const jsonSchema = (schema: ZodType, io: 'input' | 'output') => toJsonSchema(schema, { io });

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const pathParams = (path: string) => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);

const envelopeFailure = {
  type: 'object',
  properties: { success: { const: false }, error: { type: 'string' } },
  required: ['success', 'error'],
};

function queryParameters(schema: ZodType | undefined): Array<Record<string, unknown>> {
  if (!schema) return [];
  const js = jsonSchema(schema, 'input');
  const props = (js.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((js.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, s]) => ({ name, in: 'query', required: required.has(name), schema: s }));
}

export function buildOpenApi(routes: readonly RouteDef[], opts: { version: string; port: number }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const p = toOpenApiPath(r.path);
    const op: Record<string, unknown> = {
      operationId: `${r.method.toLowerCase()}${r.path.replace(/[/:.-]+(\w)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: r.summary,
      tags: r.custom && !r.response ? ['Custom Endpoints'] : r.tags,
      parameters: [...pathParams(r.path).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })), ...queryParameters(r.query)],
    };
    if (r.body) op.requestBody = { required: false, content: { 'application/json': { schema: jsonSchema(r.body, 'input') } } };
    const status = String(r.successStatus ?? 200);
    const produces = r.produces ?? 'json';
    let success: Record<string, unknown>;
    if (produces === 'sse') success = { description: 'Server-Sent Events stream', content: { 'text/event-stream': { schema: { type: 'string' } } } };
    else if (produces === 'html') success = { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } };
    else if (produces === 'bare-json') success = { description: 'JSON document', content: { 'application/json': { schema: r.response ? jsonSchema(r.response, 'output') : {} } } };
    else
      success = {
        description: 'Success',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: { success: { const: true }, data: r.response ? jsonSchema(r.response, 'output') : {} },
              required: ['success', 'data'],
            },
          },
        },
      };
    op.responses = {
      [status]: success,
      default: { description: 'Failure envelope', content: { 'application/json': { schema: envelopeFailure } } },
    };
    (paths[p] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: API_TITLE, version: opts.version, description: 'eventloom: AI agents and durable workflows over HTTP, SSE and WebSocket.' },
    servers: [{ url: `http://localhost:${opts.port}` }],
    paths,
  };
}
