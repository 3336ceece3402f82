/**
 * The OpenAPI 3.1 document, derived from the route table (docs/api-reference.md, "Documentation routes"): every built-in route and
 * every custom route, paths written `{param}`, request/response schemas from zod via z.toJSONSchema.
 * Built per request, so `servers` is the address the client used (proxies' X-Forwarded-* included),
 * path ids list what is registered, and a bearer scheme appears when JWT auth is on.
 */
import type { ZodType } from 'zod';
import type { RouteDef } from '../contract/routes.js';
import { toJsonSchema } from '../kernel/json-schema.js';
import { pathParamValues, requestExamples, type DocsCatalog } from './openapi-examples.js';

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

export interface OpenApiOptions {
  version: string;
  port: number;
  /** the origin the client used (`proto://host`); default `http://localhost:<port>` */
  origin?: string;
  /** JWT auth is on: offer a bearer scheme so the explorer's "Authorize" sends the token */
  bearer?: boolean;
  catalog?: DocsCatalog;
}

/** Tags listed first, in this order; the others follow in the order routes bring them. */
const LEADING_TAGS = ['Agents', 'Workflows'];

function pathParameter(path: string, name: string, catalog: DocsCatalog | undefined): Record<string, unknown> {
  const values = catalog ? pathParamValues(path, name, catalog) : undefined;
  if (!values || values.length === 0) return { name, in: 'path', required: true, schema: { type: 'string' } };
  return { name, in: 'path', required: true, schema: { type: 'string', enum: values }, example: values[0] };
}

export function buildOpenApi(routes: readonly RouteDef[], opts: OpenApiOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const tagOrder: string[] = [...LEADING_TAGS];
  for (const r of routes) {
    const p = toOpenApiPath(r.path);
    const tags = r.custom && !r.response ? ['Custom Endpoints'] : r.tags;
    for (const t of tags ?? []) if (!tagOrder.includes(t)) tagOrder.push(t);
    const op: Record<string, unknown> = {
      operationId: `${r.method.toLowerCase()}${r.path.replace(/[/:.-]+(\w)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: r.summary,
      tags,
      parameters: [...pathParams(r.path).map((name) => pathParameter(r.path, name, opts.catalog)), ...queryParameters(r.query)],
    };
    if (r.body) {
      const examples = opts.catalog ? requestExamples(r.method, r.path, opts.catalog) : undefined;
      op.requestBody = { required: false, content: { 'application/json': { schema: jsonSchema(r.body, 'input'), ...(examples ? { examples } : {}) } } };
    }
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
              properties: {
                success: { const: true },
                data: r.response ? jsonSchema(r.response, 'output') : {},
                ...(r.meta ? ((jsonSchema(r.meta, 'output') as { properties?: Record<string, unknown> }).properties ?? {}) : {}),
              },
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
  const usedTags = new Set(Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((op) => (op as { tags?: string[] }).tags ?? [])));
  return {
    openapi: '3.1.0',
    info: { title: API_TITLE, version: opts.version, description: 'eventloom: AI agents and durable workflows over HTTP, SSE and WebSocket.' },
    servers: [{ url: opts.origin ?? `http://localhost:${opts.port}` }],
    tags: tagOrder.filter((t) => usedTags.has(t)).map((name) => ({ name })),
    ...(opts.bearer
      ? {
          components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
          // optional: public routes work without a token, private ones need it
          security: [{}, { bearerAuth: [] }],
        }
      : {}),
    paths,
  };
}
