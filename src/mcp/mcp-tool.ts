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
 * Parameters: a zod schema standing for the server's `inputSchema` (see mcpInputSchema): the model
 * and `/tools` see the server's JSON Schema as is, and direct execution validates input locally
 * (400 `Invalid tool input: …`) with a JSON Schema validator, so no input the server accepts is
 * refused.
 *
 * Result: the MCP `CallToolResult` without `isError` (`{content: [...], structuredContent?}`), as
 * VoltAgent's MCP tools return it; a result flagged `isError` becomes a thrown error with its text.
 */
import { z, type ZodType } from 'zod';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Logger } from 'pino';
import { createTool, type Tool } from '../kernel/define-tool.js';
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

type JsonObject = Record<string, unknown>;
type Issue = { path: PropertyKey[]; message: string };

const ajv = new AjvJsonSchemaValidator();

function compileValidator(schema: JsonObject): ((value: unknown) => { valid: boolean; errorMessage?: string }) | undefined {
  try {
    return ajv.getValidator(schema);
  } catch {
    return undefined;
  }
}

function zodFrom(schema: JsonObject): ZodType | undefined {
  try {
    return z.fromJSONSchema(schema);
  } catch {
    return undefined;
  }
}

/** ajv's `data/a/b must be number, data must have …` as issues with paths. */
function ajvIssues(text: string): Issue[] {
  return text.split(/, (?=data[/ ])/).map((part) => {
    const m = /^data((?:\/[^ ]*)?) (.*)$/s.exec(part);
    if (!m) return { path: [], message: part };
    const path = m[1]
      ? m[1]
          .slice(1)
          .split('/')
          .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
      : [];
    return { path, message: m[2] };
  });
}

/**
 * The zod schema standing for an MCP tool's `inputSchema`: its JSON Schema output is the server's
 * schema verbatim (through `.meta`), and its check is a JSON Schema validator (the SDK's ajv),
 * so every input the server accepts passes. Issues are zod's (from `z.fromJSONSchema`) when zod
 * agrees the input is bad, else the validator's. A schema neither can compile accepts any object.
 */
export function mcpInputSchema(inputSchema: unknown): ZodType {
  const raw: JsonObject = inputSchema && typeof inputSchema === 'object' && !Array.isArray(inputSchema) ? { ...(inputSchema as JsonObject) } : { type: 'object' };
  // the dialect is the server's business; validators and models read the keywords
  delete raw.$schema;
  const validate = compileValidator(raw);
  const zod = zodFrom(raw);
  return z
    .unknown()
    .superRefine((value, ctx) => {
      let issues: Issue[] = [];
      if (validate) {
        const r = validate(value);
        if (r.valid) return;
        const zr = zod?.safeParse(value);
        issues = zr && !zr.success ? zr.error.issues.map((i) => ({ path: [...i.path], message: i.message })) : ajvIssues(r.errorMessage ?? 'is invalid');
      } else if (zod) {
        const zr = zod.safeParse(value);
        if (zr.success) return;
        issues = zr.error.issues.map((i) => ({ path: [...i.path], message: i.message }));
      } else if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        issues = [{ path: [], message: 'must be an object' }];
      }
      for (const i of issues) ctx.addIssue({ code: 'custom', path: i.path, message: i.message });
    })
    .meta(raw);
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
      logger.warn(
        { mcpServer: conn.id, tool: def.name },
        `MCP tool '${def.name}' of server '${conn.id}' is skipped: ${name === undefined ? 'its name is not a valid tool name' : `another of its tools is also named ${name}`}`,
      );
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
