/**
 * MCP tools as eventloom tools, without a server: naming (prefix, sanitising, skipping), the
 * parameters standing for an `inputSchema` (verbatim JSON Schema, JSON Schema validation that
 * never refuses what the schema allows, issue paths), and a call to a server that is not connected.
 */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { McpConnection, type McpToolDefinition } from '../../src/mcp/connection.js';
import { eventloomToolName, mcpInputSchema, mcpTools, toolPrefix } from '../../src/mcp/mcp-tool.js';
import { parseToolInput, toolParametersJsonSchema } from '../../src/kernel/define-tool.js';
import { createTool } from '../../src/kernel/define-tool.js';

const silent = pino({ level: 'silent' });

function offlineConnection(tools: Array<Partial<McpToolDefinition> & { name: string }>): McpConnection {
  const c = new McpConnection({ id: 'srv', transport: 'stdio', config: { command: 'unused' } }, silent, { name: 't', version: '0' });
  c.tools = tools.map((t) => ({ inputSchema: { type: 'object' }, ...t }));
  return c;
}

describe('tool names', () => {
  it('prefixes with <id>_ by default, a configured prefix, or nothing', () => {
    expect(toolPrefix('files', undefined)).toBe('files_');
    expect(toolPrefix('files', 'fs-')).toBe('fs-');
    expect(toolPrefix('files', false)).toBe('');
    expect(toolPrefix('files', '')).toBe('');
  });

  it('replaces characters a tool name cannot have and refuses names over 64 characters', () => {
    expect(eventloomToolName('web.search_', 'find/all.v2')).toBe('web_search_find_all_v2');
    expect(eventloomToolName('', 'x'.repeat(64))).toBe('x'.repeat(64));
    expect(eventloomToolName('p_', 'x'.repeat(63))).toBeUndefined();
  });

  it('skips tools whose names collide or cannot be made valid, keeping the listing order', () => {
    const conn = offlineConnection([{ name: 'a.b' }, { name: 'a_b' }, { name: 'z'.repeat(70) }, { name: 'c', description: 'C', title: 'ignored' }, { name: 'd', title: 'Title only' }]);
    const bindings = mcpTools(conn, undefined, silent);
    expect(bindings.map((b) => [b.tool.name, b.mcpName])).toEqual([
      ['srv_a_b', 'a.b'],
      ['srv_c', 'c'],
      ['srv_d', 'd'],
    ]);
    expect(bindings.map((b) => b.tool.description)).toEqual(['', 'C', 'Title only']);
    expect(bindings[0].tool.tags).toEqual(['mcp', 'mcp:srv']);
  });

  it('fails a call when the server is not connected', async () => {
    const [b] = mcpTools(offlineConnection([{ name: 'x' }]), false, silent);
    await expect(b.tool.execute!({}, { context: {}, signal: new AbortController().signal })).rejects.toThrow("MCP server 'srv' is not connected");
  });
});

describe('mcpInputSchema', () => {
  const tool = (inputSchema: unknown) => createTool({ name: 't', description: '', parameters: mcpInputSchema(inputSchema), execute: () => null });

  it("shows the server's JSON Schema as is, without its dialect", () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { a: { type: 'number', description: 'A' }, b: { type: 'number' } },
      oneOf: [{ required: ['a'] }, { required: ['b'] }],
      additionalProperties: false,
    };
    const { $schema, ...rest } = schema;
    expect(toolParametersJsonSchema(tool(schema))).toEqual(rest);
  });

  it('accepts every input the schema allows, including ones zod cannot express', () => {
    const t = tool({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, oneOf: [{ required: ['a'] }, { required: ['b'] }] });
    expect(parseToolInput(t, { a: 1 })).toEqual({ ok: true, value: { a: 1 } });
    expect(parseToolInput(t, { b: 2 })).toEqual({ ok: true, value: { b: 2 } });
    expect(parseToolInput(t, {}).ok).toBe(false);
    expect(parseToolInput(t, { a: 1, b: 2 }).ok).toBe(false);
  });

  it('reports issues with the paths of the offending fields', () => {
    const t = tool({ type: 'object', properties: { a: { type: 'number' }, inner: { type: 'object', properties: { s: { type: 'string' } } } }, required: ['a'] });
    const r = parseToolInput(t, { a: 'x', inner: { s: 1 } });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.issues).toMatch(/^a: .+; inner\.s: .+$/);
    const root = parseToolInput(t, 'six');
    expect(!root.ok && root.issues).toMatch(/^\(root\): /);
  });

  it('falls back to the validator text when zod cannot read the schema', () => {
    // zod has no if/then/else: the JSON Schema validator alone decides and words the issues
    const t = tool({
      type: 'object',
      properties: { kind: { enum: ['user', 'team'] }, w: { type: 'integer' } },
      if: { properties: { kind: { const: 'team' } } },
      then: { required: ['w'] },
    });
    expect(parseToolInput(t, { kind: 'user' })).toEqual({ ok: true, value: { kind: 'user' } });
    expect(parseToolInput(t, { kind: 'team', w: 3 })).toEqual({ ok: true, value: { kind: 'team', w: 3 } });
    const missing = parseToolInput(t, { kind: 'team' });
    expect(!missing.ok && missing.issues).toMatch(/^\(root\): must have required property 'w'/);
    const r = parseToolInput(t, { kind: 'user', w: 1.5 });
    expect(!r.ok && r.issues).toBe('w: must be integer');
  });

  it('accepts any object for a schema nothing can compile', () => {
    const t = tool({ type: 'object', properties: { x: { type: 'strange' } } });
    expect(parseToolInput(t, { x: 1 })).toEqual({ ok: true, value: { x: 1 } });
    expect(parseToolInput(t, [1]).ok).toBe(false);
  });

  it('passes the input through unchanged (no stripping, no defaults applied)', () => {
    const t = tool({ type: 'object', properties: { a: { type: 'number', default: 5 } } });
    expect(parseToolInput(t, { extra: true })).toEqual({ ok: true, value: { extra: true } });
  });
});
