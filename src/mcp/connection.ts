/**
 * One configured MCP server as seen from eventloom: an `@modelcontextprotocol/sdk` client over stdio
 * (a child process) or streamable HTTP, its handshake results (server info, capabilities) and its
 * tool list.
 *
 * - `connect()` never rejects: a server that cannot be started, does not answer `initialize` and
 *   `tools/list` within `connectTimeoutMs`, or fails in any other way ends in status `error` with
 *   the reason, is logged, and is closed (a half-started child process is killed).
 * - A server that goes away after connecting (child exited, HTTP session ended) turns `closed`; each
 *   tool call while it is down tries a reconnection (single-flight, same time-out) before failing.
 *   The tools stay those of the first listing (no `tools/list_changed` handling).
 * - stdio servers' stderr is piped into the server log (debug), its last lines kept for the
 *   failure message in the log.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Implementation, ServerCapabilities, Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, isStdioConfig, type McpServerEntry } from './config.js';

export type { McpToolDefinition };
export type McpStatus = 'connecting' | 'connected' | 'error' | 'closed';

const STDERR_LINES = 20;

export class McpToolCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpToolCallError';
  }
}

export class McpConnection {
  status: McpStatus = 'connecting';
  error: string | undefined;
  serverInfo: Implementation | undefined;
  capabilities: ServerCapabilities | undefined;
  /** the tools the server listed at the (first successful) connection */
  tools: McpToolDefinition[] = [];
  private client: Client | undefined;
  private connecting: Promise<void> | undefined;
  private stopped = false;
  private everConnected = false;
  private readonly stderrTail: string[] = [];

  constructor(
    readonly entry: McpServerEntry,
    private readonly logger: Logger,
    private readonly clientInfo: Implementation,
  ) {}

  get id(): string {
    return this.entry.id;
  }

  private get connectTimeoutMs(): number {
    return this.entry.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  }

  /** Connects (or reconnects) once; concurrent callers share the attempt. Never rejects. */
  connect(): Promise<void> {
    this.connecting ??= this.attempt().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async attempt(): Promise<void> {
    this.status = 'connecting';
    this.error = undefined;
    const client = new Client(this.clientInfo, { capabilities: {} });
    const transport = this.createTransport();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`did not answer within ${this.connectTimeoutMs} ms`)), this.connectTimeoutMs);
    });
    try {
      const handshake = (async () => {
        await client.connect(transport, { timeout: this.connectTimeoutMs });
        const tools = await this.listAllTools(client);
        return tools;
      })();
      handshake.catch(() => undefined);
      const tools = await Promise.race([handshake, deadline]);
      if (this.stopped) {
        await client.close().catch(() => undefined);
        this.status = 'closed';
        return;
      }
      // eventloom tools are made once from the first listing; a reconnection keeps them
      if (!this.everConnected) this.tools = tools;
      this.everConnected = true;
      this.client = client;
      this.serverInfo = client.getServerVersion();
      this.capabilities = client.getServerCapabilities();
      this.status = 'connected';
      client.onclose = () => {
        if (this.client !== client) return;
        this.client = undefined;
        if (this.status === 'connected') {
          this.status = 'closed';
          this.error = 'connection closed';
          if (!this.stopped) this.logger.warn({ mcpServer: this.id, stderr: this.stderrText() }, `MCP server '${this.id}' closed the connection`);
        }
      };
      client.onerror = (err) => this.logger.debug({ mcpServer: this.id, err }, `MCP server '${this.id}' transport error`);
      this.logger.info({ mcpServer: this.id, server: this.serverInfo, tools: tools.map((t) => t.name) }, `MCP server '${this.id}' connected`);
    } catch (err) {
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      this.status = 'error';
      this.error = `Failed to connect: ${describeError(err)}`;
      this.logger.error({ mcpServer: this.id, err, stderr: this.stderrText() }, `MCP server '${this.id}' could not be connected: ${this.error}`);
    } finally {
      clearTimeout(timer);
    }
  }

  private async listAllTools(client: Client): Promise<McpToolDefinition[]> {
    const out: McpToolDefinition[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.connectTimeoutMs });
      out.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  }

  private createTransport(): Transport {
    const c = this.entry.config;
    if (isStdioConfig(c)) {
      const t = new StdioClientTransport({ command: c.command, args: c.args, env: c.env, cwd: c.cwd, stderr: 'pipe' });
      t.stderr?.on('data', (chunk: Buffer) => this.onStderr(chunk.toString()));
      return t;
    }
    return new StreamableHTTPClientTransport(new URL(c.url), c.headers ? { requestInit: { headers: c.headers } } : undefined);
  }

  private onStderr(text: string): void {
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      this.stderrTail.push(line);
      if (this.stderrTail.length > STDERR_LINES) this.stderrTail.shift();
      this.logger.debug({ mcpServer: this.id }, line);
    }
  }

  private stderrText(): string | undefined {
    return this.stderrTail.length > 0 ? this.stderrTail.join('\n') : undefined;
  }

  /**
   * Calls one tool of the server. A result flagged `isError` is thrown as an error carrying the
   * server's text, so callers see a failed tool rather than an odd success.
   */
  async callTool(name: string, args: unknown, signal: AbortSignal): Promise<Omit<CallToolResult, 'isError'>> {
    // a server that was up once is worth a reconnection (single-flight); one that never came up is not
    if (!this.client && this.everConnected && !this.stopped) await this.connect();
    const client = this.client;
    if (!client || this.status !== 'connected') throw new McpToolCallError(`MCP server '${this.id}' is not connected${this.error ? ` (${this.error})` : ''}`);
    signal.throwIfAborted();
    const result = (await client.callTool({ name, arguments: (args ?? {}) as Record<string, unknown> }, undefined, {
      signal,
      timeout: this.entry.config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    })) as CallToolResult;
    const { isError, ...rest } = result;
    if (isError) throw new McpToolCallError(errorText(result) || `MCP tool ${name} failed`);
    return rest;
  }

  async close(): Promise<void> {
    this.stopped = true;
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (this.status === 'connected' || this.status === 'connecting') this.status = 'closed';
    await client?.close().catch((err: unknown) => this.logger.debug({ mcpServer: this.id, err }, 'closing the MCP client failed'));
  }
}

function errorText(result: CallToolResult): string {
  const texts: string[] = [];
  for (const c of result.content ?? []) if (c.type === 'text') texts.push(c.text);
  return texts.join('\n').trim();
}

/** The message, with the cause's when there is one (`fetch failed (connect ECONNREFUSED …)`). */
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const causeText = cause instanceof Error ? cause.message : undefined;
  return causeText && !err.message.includes(causeText) ? `${err.message} (${causeText})` : err.message;
}
