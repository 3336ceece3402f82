/**
 * The MCP server (`POST /mcp`): the Streamable HTTP transport of the Model Context Protocol, in its
 * stateless form, exposing the tools of catalog.ts. Each request gets a fresh SDK `Server` and
 * `WebStandardStreamableHTTPServerTransport` (the SDK's stateless pattern): the edge's request
 * becomes a web `Request`, the transport's `Response` becomes the route's answer, so the SDK does
 * all of the protocol (initialize, version negotiation, JSON-RPC errors) and the edge all of HTTP
 * (routing, auth, body limits). Responses are JSON (`enableJsonResponse`): a call answers once.
 * `GET /mcp` answers 405, which the transport defines as "no server-initiated stream here". Requests
 * the transport refuses (not a JSON-RPC message, ...) get the edge's failure envelope with a 4xx.
 *
 * The SDK is loaded on the first `/mcp` request: with what it pulls in (ajv, a zod v3 copy,
 * zod-to-json-schema) it is a fifth of the JavaScript a start would otherwise compile, for a route
 * many servers never serve.
 */
import type { Logger } from 'pino';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { userIdentity, type RequestContext, type RouteDef, type RouteResult } from '../../contract/routes.js';
import { AppError, toFailure, type ErrorCode as AppErrorCode } from '../../errors.js';
import { VERSION } from '../../version.js';
import { mcpTools, type McpCatalogDeps, type McpCaller } from './catalog.js';

export type CatalogAndLogger = McpCatalogDeps & { logger: Logger };

const tags = ['MCP server'];

/** `POST /mcp` (the transport) and `GET /mcp` (405: no server-initiated stream). */
export function mcpServerRoutes(catalog: CatalogAndLogger): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/mcp',
      auth: 'execution',
      summary: 'MCP server (Streamable HTTP, stateless): the configured tools, each agent and each workflow as MCP tools',
      tags,
      // JSON-RPC responses, without the envelope
      produces: 'bare-json',
      handler: (rctx) => handleMcp(catalog, rctx),
    },
    {
      method: 'GET',
      path: '/mcp',
      auth: 'execution',
      summary: 'MCP server: no server-initiated event stream (405, as the Streamable HTTP transport defines)',
      tags,
      handler: () => {
        const failure = toFailure(new AppError('METHOD_NOT_ALLOWED', 'Method not allowed: this MCP server is stateless and sends no server-initiated messages; POST requests to /mcp'));
        return { kind: 'body', status: failure.status, contentType: 'application/json', headers: { Allow: 'POST' }, body: JSON.stringify(failure.body) };
      },
    },
  ];
}

/** The parts of the SDK the route uses, loaded once, on the first request. */
async function loadSdk() {
  const [{ Server }, { WebStandardStreamableHTTPServerTransport }, { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { Server, WebStandardStreamableHTTPServerTransport, CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError };
}
type Sdk = Awaited<ReturnType<typeof loadSdk>>;
let sdkLoading: Promise<Sdk> | undefined;
const sdk = (): Promise<Sdk> => (sdkLoading ??= loadSdk());

/** One SDK server answering `tools/list` and `tools/call` for one request's caller. */
function buildServer({ Server, CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError }: Sdk, deps: McpCatalogDeps, caller: McpCaller, logger: Logger): Server {
  const server = new Server({ name: 'eventloom', version: VERSION }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: mcpTools(deps).map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as { type: 'object' } })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const tool = mcpTools(deps).find((t) => t.name === req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${req.params.name} not found`);
    try {
      const result = await tool.call(req.params.arguments ?? {}, caller);
      return { content: [{ type: 'text', text: typeof result.text === 'string' ? result.text : JSON.stringify(result) }], structuredContent: result };
    } catch (err) {
      // a failed call is a tool result the model can read (MCP `isError`), not a protocol error
      if (!(err instanceof AppError)) logger.warn({ err, tool: tool.name }, 'MCP tool call failed');
      const message = err instanceof Error ? err.message : String(err);
      const cause = err instanceof AppError && typeof err.extra?.cause === 'string' ? `: ${err.extra.cause}` : '';
      return { content: [{ type: 'text', text: `${message}${cause}` }], isError: true };
    }
  });
  return server;
}

/** what the transport's `Request` is addressed to (see handleMcp) */
const MCP_REQUEST_URL = 'http://eventloom.invalid/mcp';

const TRANSPORT_FAILURES: Record<number, AppErrorCode> = { 404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED', 413: 'BODY_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' };

/** The message of the transport's JSON-RPC error answer. */
function transportError(body: string): string {
  try {
    const m = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof m === 'string' && m !== '') return m;
  } catch {
    /* not JSON */
  }
  return 'the MCP transport refused it';
}

async function handleMcp(deps: CatalogAndLogger, ctx: RequestContext): Promise<RouteResult> {
  const caller: McpCaller = { headers: ctx.headers, signal: ctx.signal };
  const identity = ctx.user && userIdentity(ctx.user);
  if (identity) caller.userId = identity;
  const loaded = await sdk();
  const server = buildServer(loaded, deps, caller, deps.logger);
  const transport = new loaded.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const headers = new Headers();
    for (const [k, v] of Object.entries(ctx.headers)) headers.set(k, v);
    // every answer is JSON (enableJsonResponse), so a client that accepts only JSON is served too
    headers.set('accept', 'application/json, text/event-stream');
    // the edge parsed the body already; the transport takes it as `parsedBody`. The URL is a fixed one: the
    // transport reads none of it, and the client's origin (from Host / X-Forwarded-*) need not parse as a URL
    const request = new Request(MCP_REQUEST_URL, { method: 'POST', headers });
    const response = await transport.handleRequest(request, { parsedBody: ctx.body });
    const body = await response.text();
    // the transport refused the request itself (not a JSON-RPC message, ...): the edge's failure envelope
    if (response.status >= 400) throw new AppError(TRANSPORT_FAILURES[response.status] ?? 'BAD_REQUEST', `Invalid MCP request: ${transportError(body)}`);
    const out: Record<string, string> = {};
    response.headers.forEach((v, k) => {
      if (k !== 'content-type' && k !== 'content-length') out[k] = v;
    });
    return { kind: 'body', status: response.status, contentType: response.headers.get('content-type') ?? 'application/json', body, headers: out };
  } finally {
    await transport.close();
    await server.close();
  }
}
