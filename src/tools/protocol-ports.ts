/**
 * The server-executable tools as the MCP server offers them: each validates its arguments and runs
 * as `POST /tools/:name/execute` does. The composition root hands them to the MCP server's port,
 * which they match by shape, so this domain imports no protocol.
 */
import { AppError } from '../errors.js';
import { parseToolInput, toolParametersJsonSchema } from '../kernel/define-tool.js';
import type { ToolCatalog } from './catalog.js';
import { runToolDirect, type ToolRunDeps } from './tool-runs.js';

export function mcpTools(catalog: ToolCatalog, deps: ToolRunDeps) {
  return catalog.executable().map(({ tool }) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: toolParametersJsonSchema(tool),
    async call(args: Record<string, unknown>, caller: { userId?: string; signal: AbortSignal }) {
      const parsed = parseToolInput(tool, args);
      if (!parsed.ok) throw new AppError('BAD_REQUEST', `Invalid tool input: ${parsed.issues}`);
      const r = await runToolDirect(deps, tool, { input: parsed.value, context: {}, userId: caller.userId, signal: caller.signal });
      return { result: r.result };
    },
  }));
}
