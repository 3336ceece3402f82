/**
 * MCP tools as eventloom tools (createTool), so agents, `/tools` and `/tools/:name/execute` treat
 * them like any other tool.
 *
 * Naming: `<prefix><mcpName>` where the prefix is the server's `toolPrefix`, by default `<id>_`
 * (as VoltAgent names MCP tools), so two servers with a `search` tool do not collide with each
 * other or with local tools; `toolPrefix: false` keeps the server's names. Characters outside
 * `[A-Za-z0-9_-]` become `_`; a name still invalid (over 64 characters) or taken twice within one
 * server is skipped with a warning.
 *
 * Parameters: the server's `inputSchema` (JSON Schema) turned into zod with `z.fromJSONSchema`, so
 * direct execution validates input locally (400 `Invalid tool input: …`) and the model sees the
 * same schema; a schema zod cannot read falls back to "any object" and the server validates.
 *
 * Result: the MCP `CallToolResult` without `isError` (`{content: [...], structuredContent?}`), as
 * VoltAgent's MCP tools return it; a result flagged `isError` becomes a thrown error with its text.
 */
import { z, type ZodType } from 'zod';
import type { Logger } from 'pino';
import { createTool, type Tool } from '../tools/define-tool.js';
import type { McpConnection, McpToolDefinition } from './connection.js';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function toolPrefix(serverId: string, configured: string | false | undefined): string {
  if (configured === false) return '';
  return configured ?? `${serverId}_`;
}

/** The eventloom name of an MCP tool, or undefined when no valid name results. */
export function eventloomToolName(prefix: string, mcpName: string): string | undefined {
  const name = `${prefix}${mcpName}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return NAME.test(name) ? name : undefined;
}

export function mcpInputSchema(inputSchema: unknown): ZodType {
  if (inputSchema && typeof inputSchema === 'object') {
    try {
      return z.fromJSONSchema(inputSchema as Parameters<typeof z.fromJSONSchema>[0]);
    } catch {
      /* fall through to the permissive schema */
    }
  }
  return z.looseObject({});
}

export interface McpToolBinding {
  serverId: string;
  /** the name on the MCP server */
  mcpName: string;
  definition: McpToolDefinition;
  tool: Tool;
}

/** The eventloom tools of one connected server, in the server's listing order. */
export function mcpTools(conn: McpConnection, prefixConfig: string | false | undefined, logger: Logger): McpToolBinding[] {
  const prefix = toolPrefix(conn.id, prefixConfig);
  const seen = new Set<string>();
  const out: McpToolBinding[] = [];
  for (const def of conn.tools) {
    const name = eventloomToolName(prefix, def.name);
    if (name === undefined || seen.has(name)) {
      logger.warn({ mcpServer: conn.id, tool: def.name }, `MCP tool '${def.name}' of server '${conn.id}' is skipped: ${name === undefined ? 'its name is not a valid tool name' : `another of its tools is also named ${name}`}`);
      continue;
    }
    seen.add(name);
    const mcpName = def.name;
    const tool = createTool({
      name,
      description: def.description ?? def.title ?? '',
      parameters: mcpInputSchema(def.inputSchema),
      tags: ['mcp', `mcp:${conn.id}`],
      execute: (input: unknown, { signal }) => conn.callTool(mcpName, input, signal),
    });
    out.push({ serverId: conn.id, mcpName, definition: def, tool });
  }
  return out;
}
