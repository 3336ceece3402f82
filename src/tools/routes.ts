/**
 * The tool routes of docs/api-reference.md "Tools and MCP servers": `GET /tools` (auth `management`) lists every
 * server-executable tool once, in first-registration order; `POST /tools/:name/execute` (auth
 * `execution`, the authenticated user merged into `context.user` and `userId`) runs the first
 * registered tool of that name with the caller's context and the request's abort signal, records
 * the run in the log (src/tools/tool-runs.ts) and answers once the record is durable.
 */
import { z } from 'zod';
import { AppError } from '../errors.js';
import { ok, type RouteDef } from '../contract/routes.js';
import type { EventLog } from '../log/types.js';
import type { Logger } from 'pino';
import type { ToolCatalog } from './catalog.js';
import { toolListItem } from './catalog.js';
import { parseToolInput, toolParametersJsonSchema } from '../kernel/define-tool.js';
import { exampleFromJsonSchema } from '../kernel/json-schema-example.js';
import { examplesPer, type ModuleDocs } from '../contract/docs.js';
import { runToolDirect } from './tool-runs.js';
import { userIdentity } from '../contract/routes.js';
import { EncodedAnswers } from '../contract/encoded-answers.js';

export interface ToolRouteDeps {
  log: EventLog;
  logger?: Logger;
  catalog(): ToolCatalog;
}

const ExecuteToolBody = z.object({
  input: z.unknown().optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  userId: z.string().optional(),
  conversationId: z.string().optional(),
});
type ExecuteToolBody = z.infer<typeof ExecuteToolBody>;

const ToolListItem = z.object({
  id: z.string().optional(),
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  status: z.literal('ready'),
  agents: z.array(z.object({ id: z.string(), name: z.string() })),
  tags: z.array(z.string()).optional(),
});

const ExecuteToolResult = z.object({ toolName: z.string(), result: z.unknown(), executionTime: z.number(), timestamp: z.string() });

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

const tags = ['Tools'];

export function toolRoutes(deps: ToolRouteDeps): RouteDef[] {
  // the list, encoded once per catalog (contract/encoded-answers.ts)
  const answers = new EncodedAnswers();
  return [
    {
      method: 'GET',
      path: '/tools',
      auth: 'management',
      summary: 'List tools',
      tags,
      pathOnly: true,
      response: z.array(ToolListItem),
      handler: () => {
        const catalog = deps.catalog();
        return answers.answer('', catalog, () => catalog.executable().map(toolListItem));
      },
    },
    {
      method: 'POST',
      path: '/tools/:name/execute',
      auth: 'execution',
      summary: 'Execute a tool',
      tags,
      body: ExecuteToolBody,
      mergeUser: 'tool',
      response: ExecuteToolResult,
      handler: async (ctx) => {
        const name = ctx.params.name;
        const entry = deps.catalog().get(name);
        if (!entry) throw new AppError('NOT_FOUND', `Tool ${name} not found`);
        const tool = entry.tool;
        if (typeof tool.execute !== 'function') throw new AppError('BAD_REQUEST', `Tool ${name} cannot be executed on the server`);
        const body = ctx.body as ExecuteToolBody;
        const parsed = parseToolInput(tool, body.input ?? {});
        if (!parsed.ok) throw new AppError('BAD_REQUEST', `Invalid tool input: ${parsed.issues}`);
        const context = body.context ?? {};
        // an authenticated caller's identity is its userId: the client cannot name another user in context
        const identity = ctx.user ? userIdentity(ctx.user) : undefined;
        const userId = identity ?? str(context.userId) ?? body.userId;
        const conversationId = str(context.conversationId) ?? body.conversationId;
        const r = await runToolDirect({ log: deps.log, logger: deps.logger }, tool, { input: parsed.value, context, userId, conversationId, signal: ctx.signal });
        return ok({ toolName: r.toolName, result: r.result, executionTime: r.executionTime, timestamp: r.timestamp });
      },
    },
  ];
}

/** The API document's view of the tools: the executable tools' names for `:name`, and an input for each. */
export function toolDocs(catalog: ToolCatalog): ModuleDocs {
  const tools = catalog.executable().map((e) => ({ name: e.tool.name, parameters: toolParametersJsonSchema(e.tool) }));
  return {
    pathParams: [{ prefix: '/tools/', param: 'name', values: tools.map((t) => t.name) }],
    requestExamples: {
      'POST /tools/:name/execute': examplesPer(
        tools,
        (t) => t.name,
        (t) => ({ input: exampleFromJsonSchema(t.parameters) }),
      ),
    },
  };
}
