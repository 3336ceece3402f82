/**
 * The MCP server routes of docs/api-reference.md "Tools and MCP servers" (auth class `management`): the configured MCP servers
 * this eventloom is a client of, one server, and one server's tools (by their eventloom name, with
 * the server's own definition). Unknown id → 404 `MCP server '<id>' not found`.
 */
import { z } from 'zod';
import { AppError } from '../errors.js';
import { ok, type RouteDef } from '../contract/routes.js';
import type { McpConnection } from './connection.js';
import type { McpToolBinding } from './mcp-tool.js';
import { mcpServerShape, mcpServerTools } from './describe.js';

export interface McpRouteDeps {
  connections: ReadonlyMap<string, McpConnection>;
  toolsOf(serverId: string): readonly McpToolBinding[];
}

const McpServerSchema = z.object({
  id: z.string(),
  name: z.string(),
  version: z.string(),
  description: z.string().optional(),
  protocols: z.object({ stdio: z.boolean(), sse: z.boolean(), http: z.boolean() }),
  capabilities: z.object({ logging: z.boolean(), prompts: z.boolean(), resources: z.boolean(), elicitation: z.boolean() }),
  status: z.enum(['connecting', 'connected', 'error', 'closed']),
  error: z.string().optional(),
});

const McpToolSchema = z.object({
  name: z.string(),
  type: z.enum(['tool', 'agent', 'workflow']),
  definition: z.object({ name: z.string(), description: z.string(), inputSchema: z.record(z.string(), z.unknown()) }),
});

const tags = ['MCP'];

export function mcpRoutes(deps: McpRouteDeps): RouteDef[] {
  const find = (id: string): McpConnection => {
    const c = deps.connections.get(id);
    if (!c) throw new AppError('NOT_FOUND', `MCP server '${id}' not found`);
    return c;
  };
  return [
    {
      method: 'GET',
      path: '/mcp/servers',
      auth: 'management',
      summary: 'List the MCP servers this server is a client of',
      tags,
      response: z.object({ servers: z.array(McpServerSchema) }),
      handler: () => ok({ servers: [...deps.connections.values()].map(mcpServerShape) }),
    },
    {
      method: 'GET',
      path: '/mcp/servers/:id',
      auth: 'management',
      summary: 'Get an MCP server',
      tags,
      response: McpServerSchema,
      handler: (ctx) => ok(mcpServerShape(find(ctx.params.id))),
    },
    {
      method: 'GET',
      path: '/mcp/servers/:id/tools',
      auth: 'management',
      summary: "List an MCP server's tools",
      tags,
      response: z.object({ server: McpServerSchema, tools: z.array(McpToolSchema) }),
      handler: (ctx) => {
        const c = find(ctx.params.id);
        return ok({ server: mcpServerShape(c), tools: mcpServerTools(deps.toolsOf(c.id)) });
      },
    },
  ];
}
