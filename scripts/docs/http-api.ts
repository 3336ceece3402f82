/**
 * The HTTP API reference (docs/reference/http-api.md), generated: the route table of a default server
 * with an empty config goes through the same OpenAPI builder as `GET /doc` (src/http/openapi.ts), and
 * the document is rendered to Markdown, with each route's auth class, the WebSocket endpoints (which
 * OpenAPI cannot describe) and the error-code table of src/errors.ts. Deterministic: no origin, no
 * version, no registered ids, nothing that depends on the machine or the time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { RouteDef, WsRouteDef } from '../../src/contract/routes.js';
import { ERROR_STATUS } from '../../src/errors.js';
import { buildOpenApi } from '../../src/http/openapi.js';
import { wsEchoRoute } from '../../src/http/routes/ws-echo.routes.js';
import { toJsonSchema } from '../../src/kernel/json-schema.js';
import { startDefaultServer } from '../../src/server-assembly.js';

/** Where the generated reference lives, relative to the repository root. */
export const HTTP_API_DOC = 'docs/reference/http-api.md';

type Schema = Record<string, unknown>;

/** The built-in HTTP and WebSocket routes of a server with an empty config (the explorer on). */
async function builtInRoutes(): Promise<{ routes: RouteDef[]; wsRoutes: WsRouteDef[] }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-docs-'));
  try {
    const server = await startDefaultServer({
      config: { server: { enableSwaggerUI: true } },
      port: 0,
      host: '127.0.0.1',
      dataDir,
      // no JWT, no console key, not production: the document then has no bearer scheme
      env: { NODE_ENV: 'development' },
      logger: pino({ level: 'silent' }),
    });
    try {
      const wsRoutes = [wsEchoRoute, ...[...server.modules.values()].flatMap((m) => m.wsRoutes ?? [])];
      return { routes: [...server.routes], wsRoutes };
    } finally {
      await server.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---- compact schemas: TypeScript-like one-liners, so a body reads at a glance ----

const MAX_DEPTH = 4;
const MAX_LENGTH = 600;

function refName(ref: string): string {
  return ref.split('/').pop() ?? ref;
}

export function compactSchema(schema: unknown, depth = 0): string {
  if (schema === true || schema === undefined) return 'any';
  if (schema === false) return 'never';
  if (!schema || typeof schema !== 'object') return 'any';
  const s = schema as Schema;
  if (typeof s.$ref === 'string') return refName(s.$ref);
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[key])) {
      const parts = [...new Set((s[key] as unknown[]).map((x) => compactSchema(x, depth)))];
      return parts.length === 1 ? parts[0] : `(${parts.join(' | ')})`;
    }
  }
  if (Array.isArray(s.allOf)) return (s.allOf as unknown[]).map((x) => compactSchema(x, depth)).join(' & ');
  const type = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [];
  if (type.length > 1) return type.map((t) => compactSchema({ ...s, type: t }, depth)).join(' | ');
  switch (type[0]) {
    case 'string':
      // a query value's shape is often only its pattern (`limit` is digits): say it
      if (typeof s.pattern === 'string') return `string /${s.pattern}/`;
      return s.format ? `string(${String(s.format)})` : 'string';
    case 'integer':
    case 'number':
    case 'boolean':
    case 'null':
      return type[0];
    case 'array':
      if (Array.isArray(s.prefixItems)) return `[${(s.prefixItems as unknown[]).map((x) => compactSchema(x, depth + 1)).join(', ')}]`;
      return `${wrap(compactSchema(s.items, depth + 1))}[]`;
    case 'object':
    case undefined:
      return compactObject(s, depth);
    default:
      return String(type[0]);
  }
}

const wrap = (t: string) => (/[ |&]/.test(t) && !/^[{([]/.test(t) ? `(${t})` : t);

function compactObject(s: Schema, depth: number): string {
  const props = (s.properties ?? {}) as Record<string, unknown>;
  const keys = Object.keys(props);
  const extra = s.additionalProperties;
  if (keys.length === 0) {
    if (extra && typeof extra === 'object') return `{ [key: string]: ${compactSchema(extra, depth + 1)} }`;
    return s.type === 'object' ? 'object' : 'any';
  }
  if (depth >= MAX_DEPTH) return '{ … }';
  const required = new Set((s.required as string[] | undefined) ?? []);
  const fields = keys.map((k) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}${required.has(k) ? '' : '?'}: ${compactSchema(props[k], depth + 1)}`);
  return `{ ${fields.join(', ')} }`;
}

/**
 * A schema over several lines when its one-line form is long: object fields one per line, union members one per
 * line, each indented under its parent (for request bodies, where every field matters).
 */
function prettySchema(schema: unknown, indent = ''): string {
  const line = compactSchema(schema, -100);
  if (indent.length + line.length <= 100 || !schema || typeof schema !== 'object') return line;
  const s = schema as Schema;
  const inner = `${indent}  `;
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[key])) return `\n${(s[key] as unknown[]).map((x) => `${inner}| ${prettySchema(x, inner)}`).join('\n')}`;
  }
  if (s.type === 'array' && s.items) {
    const item = prettySchema(s.items, indent);
    return item.startsWith('\n') ? `Array<${item}\n${indent}>` : `${wrap(item)}[]`;
  }
  const props = (s.properties ?? {}) as Record<string, unknown>;
  if (Object.keys(props).length === 0) return line;
  const required = new Set((s.required as string[] | undefined) ?? []);
  const fields = Object.entries(props).map(([k, v]) => {
    const value = prettySchema(v, inner);
    return `${inner}${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}${required.has(k) ? '' : '?'}:${value.startsWith('\n') ? '' : ' '}${value}`;
  });
  return `{\n${fields.join(',\n')}\n${indent}}`;
}

/** A compact schema for a table cell or a code span: bounded, with pipes escaped. */
function cell(schema: unknown): string {
  let text = compactSchema(schema);
  if (text.length > MAX_LENGTH) text = `${text.slice(0, MAX_LENGTH)} …`;
  return text;
}

const code = (text: string) => '`` ' + text.replace(/\|/g, '\\|') + ' ``';
const escapeCell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

// ---- the document ----

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: unknown; description?: string }>;
  requestBody?: { content?: Record<string, { schema?: unknown; examples?: Record<string, { value?: unknown }> }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function renderOperation(method: string, openApiPath: string, op: Operation, auth: string | undefined): string[] {
  const out: string[] = [`### ${method.toUpperCase()} ${openApiPath}`, ''];
  if (op.summary) out.push(`${op.summary}.`.replace(/\.\.$/, '.'), '');
  if (op.description) out.push(op.description, '');
  out.push(`Auth class: \`${auth ?? 'unknown'}\` (see [Authentication and auth classes](../api-reference.md#authentication-and-auth-classes)).`, '');
  const params = op.parameters ?? [];
  if (params.length > 0) {
    out.push('| Parameter | In | Required | Schema | Notes |', '|---|---|---|---|---|');
    for (const p of params) {
      const note = (p.schema as Schema | undefined)?.description ?? p.description ?? '';
      out.push(`| \`${p.name}\` | ${p.in} | ${p.required ? 'yes' : 'no'} | ${code(cell(p.schema))} | ${escapeCell(String(note))} |`);
    }
    out.push('');
  }
  for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
    out.push(`Request body (\`${type}\`; an empty body counts as \`{}\`):`, '', '```ts', prettySchema(media.schema), '```', '');
    for (const [name, ex] of Object.entries(media.examples ?? {})) out.push(`Example \`${name}\`:`, '', '```json', JSON.stringify(ex.value, null, 2), '```', '');
  }
  out.push('| Status | Answer | Body |', '|---|---|---|');
  for (const [status, res] of Object.entries(op.responses ?? {})) {
    const bodies = Object.entries(res.content ?? {}).map(([type, media]) => `\`${type}\` ${code(cell(media.schema))}`);
    out.push(`| ${status} | ${escapeCell(res.description ?? '')} | ${bodies.join('<br>') || '(empty)'} |`);
  }
  out.push('');
  return out;
}

function renderWs(routes: readonly WsRouteDef[]): string[] {
  const out = ['## WebSocket endpoints', '', 'Handshakes take their parameters from the query string. What the messages look like: [WebSocket feeds](../api-reference.md#websocket-feeds).', ''];
  for (const r of routes) {
    out.push(`### WS ${r.path}${r.prefix ? ' (and every path below it)' : ''}`, '', `${r.summary}.`.replace(/\.\.$/, '.'), '', `Auth class: \`${r.auth}\`.`, '');
    const js = r.query ? (toJsonSchema(r.query, { io: 'input' }) as Schema) : undefined;
    const props = (js?.properties ?? {}) as Record<string, unknown>;
    const required = new Set((js?.required as string[] | undefined) ?? []);
    if (Object.keys(props).length > 0) {
      out.push('| Query parameter | Required | Schema | Notes |', '|---|---|---|---|');
      for (const [name, s] of Object.entries(props)) {
        const note = String((s as Schema).description ?? '');
        out.push(`| \`${name}\` | ${required.has(name) ? 'yes' : 'no'} | ${code(cell(s))} | ${escapeCell(note)} |`);
      }
      out.push('');
    }
  }
  return out;
}

function renderErrorCodes(): string[] {
  const out = [
    '## Error codes',
    '',
    'Every failure a client sees carries one of these codes inside the server (src/errors.ts), and the code alone decides the',
    'HTTP status. The body is always the failure envelope `{"success": false, "error": "<message>"}`; the messages are in',
    '[Errors](../api-reference.md#errors).',
    '',
    '| Code | Status |',
    '|---|---|',
  ];
  for (const [codeName, status] of Object.entries(ERROR_STATUS)) out.push(`| \`${codeName}\` | ${status} |`);
  out.push('');
  return out;
}

/** The Markdown reference of a route table, through the OpenAPI document that `GET /doc` serves. */
function renderHttpApi(routes: readonly RouteDef[], wsRoutes: readonly WsRouteDef[]): string {
  // no origin, version or catalog: the same document for everyone, at any time
  const doc = buildOpenApi(routes, { version: '(server version)', port: 3141, origin: 'http://localhost:3141' }) as {
    tags: Array<{ name: string }>;
    paths: Record<string, Record<string, Operation>>;
  };
  const authOf = new Map(routes.map((r) => [`${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`, r.auth]));
  const byTag = new Map<string, string[][]>(doc.tags.map((t) => [t.name, []]));
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const tag = op.tags?.[0] ?? 'Other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push(renderOperation(method, p, op, authOf.get(`${method.toUpperCase()} ${p}`)));
    }
  }
  const out = [
    '# HTTP API reference',
    '',
    '<!-- Generated by `npm run docs` (scripts/docs.ts) from the route table. Do not edit by hand. -->',
    '',
    'Every built-in route of an eventloom server, rendered from the OpenAPI 3.1 document that `GET /doc` serves (built by',
    "src/http/openapi.ts from the route table in src/contract/routes.ts). A running server's own document also lists its",
    'custom routes, the ids of its agents, workflows and tools, and example bodies. Schemas are written compactly:',
    '`{ a: string, b?: number }` is an object whose `b` may be left out, `T[]` an array. What a schema cannot say (status',
    'codes and messages, streams, auth, paging, the execution lifecycle) is in [the API behaviour notes](../api-reference.md).',
    '',
    'JSON answers use the envelope `{"success": true, "data": …}`; the schema given for a 200 is the whole body.',
    '',
    '## Contents',
    '',
    ...[...byTag.keys()].filter((t) => byTag.get(t)!.length > 0).map((t) => `- [${t}](#${anchor(t)})`),
    '- [WebSocket endpoints](#websocket-endpoints)',
    '- [Error codes](#error-codes)',
    '',
  ];
  for (const [tag, ops] of byTag) {
    if (ops.length === 0) continue;
    out.push(`## ${tag}`, '');
    for (const op of ops) out.push(...op);
  }
  out.push(...renderWs(wsRoutes), ...renderErrorCodes());
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

/** The reference as `npm run docs` writes it. */
export async function generateHttpApi(): Promise<string> {
  const { routes, wsRoutes } = await builtInRoutes();
  return renderHttpApi(routes, wsRoutes);
}
