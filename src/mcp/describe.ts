/**
 * The MCP shapes of docs/api-reference.md "Tools and MCP servers": `McpServer` (with the additions `status` and `error`, so an
 * operator sees why a server's tools are missing) and the `/mcp/servers/:id/tools` entries. Nothing
 * secret is shown: no command line, environment, URL or headers.
 */
import type { McpConnection } from './connection.js';
import type { McpToolBinding } from './mcp-tool.js';

export interface McpServerShape {
  id: string;
  name: string;
  version: string;
  description?: string;
  protocols: { stdio: boolean; sse: boolean; http: boolean };
  capabilities: { logging: boolean; prompts: boolean; resources: boolean; elicitation: boolean };
  /** addition: `connected`, `connecting`, `error` (never connected) or `closed` (went away) */
  status: string;
  /** addition: why the server is in `error` or `closed` */
  error?: string;
}

export function mcpServerShape(conn: McpConnection): McpServerShape {
  const c = conn.entry.config;
  const caps = conn.capabilities;
  const out: McpServerShape = {
    id: conn.id,
    name: c.name ?? conn.serverInfo?.name ?? conn.id,
    version: c.version ?? conn.serverInfo?.version ?? '0.0.0',
    protocols: { stdio: conn.entry.transport === 'stdio', sse: false, http: conn.entry.transport === 'http' },
    capabilities: { logging: !!caps?.logging, prompts: !!caps?.prompts, resources: !!caps?.resources, elicitation: false },
    status: conn.status,
  };
  if (c.description !== undefined) out.description = c.description;
  if (conn.error !== undefined) out.error = conn.error;
  return out;
}

export function mcpServerTools(bindings: readonly McpToolBinding[]): Array<Record<string, unknown>> {
  return bindings.map((b) => ({
    name: b.tool.name,
    type: 'tool',
    definition: { name: b.mcpName, description: b.definition.description ?? '', inputSchema: b.definition.inputSchema },
  }));
}
