/**
 * The `mcpServers` section of the config: `{ <id>: { command, args?, env?, cwd? } | { url, headers? } }`
 * plus `name?`, `version?`, `description?` for the listing, `toolPrefix?` (how the server's tools are
 * named in eventloom, see tool-names.ts) and two time-outs. Checked once at boot: a malformed entry
 * is an operator mistake and fails the start with a message naming the server and the field.
 */
import { z } from 'zod';
import { formatIssues } from '../errors.js';

/** How long a server may take to start and answer `initialize` + `tools/list` (ms). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** How long one tool call may take (ms); the SDK's own default. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

const SERVER_ID = /^[A-Za-z0-9_.-]{1,64}$/;

const common = {
  name: z.string().min(1).optional(),
  version: z.string().min(1).optional(),
  description: z.string().optional(),
  /** `<prefix>` put before each tool name; default `<id>_`; `false` or `''` keeps the server's names */
  toolPrefix: z.union([z.string(), z.literal(false)]).optional(),
  connectTimeoutMs: z.number().int().positive().optional(),
  requestTimeoutMs: z.number().int().positive().optional(),
};

const stdioSchema = z.strictObject({
  ...common,
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
});

const httpSchema = z.strictObject({
  ...common,
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).optional(),
});

export type McpStdioServerConfig = z.infer<typeof stdioSchema>;
export type McpHttpServerConfig = z.infer<typeof httpSchema>;
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

export interface McpServerEntry {
  id: string;
  config: McpServerConfig;
  transport: 'stdio' | 'http';
}

export const isStdioConfig = (c: McpServerConfig): c is McpStdioServerConfig => 'command' in c;

/** Checks `config.mcpServers` and returns the servers in declaration order. */
export function parseMcpServersConfig(value: unknown): McpServerEntry[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) throw new TypeError('config.mcpServers must be an object keyed by server id');
  const out: McpServerEntry[] = [];
  for (const [id, raw] of Object.entries(value as Record<string, unknown>)) {
    if (!SERVER_ID.test(id)) throw new TypeError(`config.mcpServers: server id '${id}' must be 1-64 characters of letters, digits, '_', '-' or '.'`);
    const isObj = typeof raw === 'object' && raw !== null && !Array.isArray(raw);
    const hasCommand = isObj && 'command' in raw;
    const hasUrl = isObj && 'url' in raw;
    if (!isObj || hasCommand === hasUrl) {
      throw new TypeError(`config.mcpServers.${id}: give either 'command' (a stdio server) or 'url' (a streamable HTTP server)`);
    }
    const schema = hasCommand ? stdioSchema : httpSchema;
    const r = schema.safeParse(raw);
    if (!r.success) throw new TypeError(`config.mcpServers.${id}: ${formatIssues(r.error.issues, '(root)')}`);
    out.push({ id, config: r.data, transport: hasCommand ? 'stdio' : 'http' });
  }
  return out;
}
