/**
 * The agent routes with the shapes of docs/api-reference.md "Agents": listing, detail, the five
 * generation routes (auth class `execution`, the authenticated user merged into `options`), history,
 * the agent card and its A2A well-known path. Unknown agent → 404 `Agent <id> not found`.
 */
import { z } from 'zod';
import { AppError, notFound } from '../errors.js';
import { lastEventIdOf, ok, type RequestContext, type RouteDef } from '../contract/routes.js';
import type { Agent } from './define-agent.js';
import type { AgentRuns } from './agent-runs.js';
import { newRunId } from './agent-runs.js';
import { resolveCallOptions } from './call-options.js';
import { agentCard, agentDetail, agentListItem, type DescribeEnv } from './describe.js';
import { chatAsTextRequest, ChatRequest, ObjectRequest, TextRequest } from './request-schema.js';
import { runText } from './ops-text.js';
import { answerApproval, ApprovalAnswer, findChatContinuation } from './approvals.js';
import { CHAT_HEADERS, resumeChat, runChat, runRawStream } from './ops-stream.js';
import { ResumableChats } from './resumable-chat.js';
import { userIdentity } from '../contract/routes.js';
import { EncodedAnswers } from '../contract/encoded-answers.js';
import type { ModuleDocs, RequestExamples } from '../contract/docs.js';
import { runObject, runStreamObject } from './ops-object.js';
import type { PreparedCall } from './prepare-call.js';
import type { AgentHistoryProjection } from './history.js';
import { StreamFencedError } from '../log/capabilities.js';
import { runStream } from '../../machines/agent-run.machine.js';
import type { EventLog } from '../log/types.js';
import { applyHistoryRecord, type HistoryEntry, type StoredHistoryEntry } from '../contract/agent-history-entry.js';
import { runNotFound } from './run-retention.js';

export interface AgentRouteDeps {
  runs: AgentRuns;
  history: AgentHistoryProjection;
  env: DescribeEnv;
  version: string;
}

const HISTORY_MAX_LIMIT = 100;
/** The long poll of a resumable chat's frames, which another node of a cluster relays as the stream. */
const CHAT_FRAMES_ROUTE = 'GET /agents/:id/chat/:conversationId/frames';
/** longest wait a frames request may ask for */
const FRAMES_MAX_WAIT_MS = 10_000;

/** The resumable chat a request names: the agent, the conversation and the caller (a token's user wins over `userId`). */
function resumableKey(deps: AgentRouteDeps, ctx: RequestContext): string {
  const agent = findAgent(deps, ctx.params.id);
  // an authenticated caller resumes its own stream, whatever userId the query names
  const userId = (ctx.user && userIdentity(ctx.user)) ?? (ctx.query.userId as string | undefined);
  if (userId === undefined || userId === '') throw new AppError('INVALID_REQUEST', 'Invalid request: userId: Required');
  return ResumableChats.key(agent.id, ctx.params.conversationId, userId);
}
const PAGINATION_ERROR = 'Invalid pagination parameters. Page must be >= 0, limit must be between 1 and 100';

function findAgent(deps: AgentRouteDeps, id: string): Agent {
  const agent = deps.runs.registry.get(id);
  if (!agent) throw new AppError('NOT_FOUND', `Agent ${id} not found`);
  return agent;
}

/**
 * Makes a paused run this node's (on a store shared by nodes): a run another live node holds is refused with
 * StreamFencedError, which the cluster layer meets by moving the run here once that node lets it go.
 */
async function claimRun(deps: AgentRouteDeps, runId: string): Promise<void> {
  const ownership = deps.runs.deps.host.log.ownership;
  if (!ownership) return;
  const stream = runStream(runId);
  const refused = await ownership.claim(stream);
  if (refused !== undefined) throw new StreamFencedError(stream, refused);
}

async function prepare(
  deps: AgentRouteDeps,
  ctx: RequestContext,
  agent: Agent,
  body: { input: TextRequest['input']; options?: TextRequest['options'] },
  runId: string = newRunId(),
): Promise<PreparedCall> {
  const options = resolveCallOptions(body.options, agent);
  if (options.resumableStream) {
    if (options.memory.userId === undefined) throw new AppError('BAD_REQUEST', 'userId is required for resumable streams');
    if (options.memory.conversationId === undefined) throw new AppError('BAD_REQUEST', 'conversationId is required for resumable streams');
  }
  try {
    return await deps.runs.prepare({ agent, input: body.input, options, headers: ctx.headers, runId, signal: ctx.signal });
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('EXECUTION_FAILED', err instanceof Error ? err.message : String(err));
  }
}

/** The conversation a call belongs to (given, or created by the server for memory), as a response header. */
const CONVERSATION_HEADER = 'X-Conversation-Id';
function conversationHeader(prepared: PreparedCall): Record<string, string> {
  const id = prepared.callContext.conversationId;
  return id === undefined ? {} : { [CONVERSATION_HEADER]: id };
}

/** `?page=&limit=` of the history route: integers, page ≥ 0, 1 ≤ limit (above 100 is lowered to 100). */
function parsePaging(query: Record<string, unknown>): { page: number; limit: number } {
  const num = (name: string, fallback: number) => {
    const raw = query[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n)) throw new AppError('INVALID_REQUEST', `Invalid request: ${name}: must be an integer`);
    return n;
  };
  const page = num('page', 0);
  const limit = num('limit', 10);
  if (page < 0 || limit < 1) throw new AppError('BAD_REQUEST', PAGINATION_ERROR);
  return { page, limit: Math.min(limit, HISTORY_MAX_LIMIT) };
}

const tags = ['Agents'];

/** A run of `agentId` folded from its stream as the history folds it (undefined: no such run of this agent). */
async function readRun(log: EventLog, agentId: string, runId: string): Promise<HistoryEntry | undefined> {
  let stored: StoredHistoryEntry | undefined;
  for (const r of await log.readStream(runStream(runId))) stored = applyHistoryRecord(stored, r);
  return stored?.agentId === agentId ? stored.entry : undefined;
}

/** The history page's shape for the OpenAPI document (entries as stored). */
const historyPage = z.object({
  entries: z.array(z.record(z.string(), z.unknown())),
  pagination: z.object({ page: z.number(), limit: z.number(), total: z.number(), totalPages: z.number() }),
  nextCursor: z.string().optional().describe('pass as `cursor` for the next page; absent on the last page'),
});

export function agentRoutes(deps: AgentRouteDeps): RouteDef[] {
  // the list and details, encoded once per registry state (contract/encoded-answers.ts)
  const answers = new EncodedAnswers();
  const registry = deps.runs.registry;
  return [
    {
      method: 'GET',
      path: '/agents',
      auth: 'management',
      summary: 'List agents',
      tags,
      pathOnly: true,
      handler: () => answers.answer('', registry, () => registry.list().map((a) => agentListItem(a, registry, deps.env))),
    },
    {
      method: 'GET',
      path: '/agents/:id',
      auth: 'management',
      summary: 'Get an agent',
      tags,
      pathOnly: true,
      handler: (ctx) => answers.answer(`:${ctx.params.id}`, registry, () => agentDetail(findAgent(deps, ctx.params.id), registry, deps.env)),
    },
    {
      method: 'POST',
      path: '/agents/:id/text',
      auth: 'execution',
      summary: 'Generate text',
      tags,
      body: TextRequest,
      mergeUser: 'agent',
      handler: async (ctx) => {
        const agent = findAgent(deps, ctx.params.id);
        const prepared = await prepare(deps, ctx, agent, ctx.body);
        const result = await runText(deps.runs, prepared, ctx.body.input, ctx.signal, { output: prepared.options.output });
        const conversationId = prepared.callContext.conversationId;
        // a conversation the server created is named, so the client can continue it
        return { ...ok(conversationId === undefined ? result : { ...result, conversationId }), headers: conversationHeader(prepared) };
      },
    },
    {
      method: 'POST',
      path: '/agents/:id/stream',
      auth: 'execution',
      summary: 'Stream raw generation parts (SSE)',
      tags,
      body: TextRequest,
      mergeUser: 'agent',
      produces: 'sse',
      handler: async (ctx) => {
        const agent = findAgent(deps, ctx.params.id);
        const prepared = await prepare(deps, ctx, agent, ctx.body);
        return { kind: 'sse', headers: conversationHeader(prepared), start: (sink) => runRawStream(deps.runs, prepared, ctx.body.input, ctx.signal, sink) };
      },
    },
    {
      method: 'POST',
      path: '/agents/:id/chat',
      auth: 'execution',
      summary: 'Chat: UI message stream (SSE)',
      tags,
      body: ChatRequest,
      mergeUser: 'agent',
      produces: 'sse',
      // the model's live output is not in the log: a continued run moves to this node rather than forwarding
      whenFenced: 'move',
      handler: async (ctx) => {
        const agent = findAgent(deps, ctx.params.id);
        const body = chatAsTextRequest(ctx.body, (options) => agent.memory !== null && resolveCallOptions(options, agent).memory.userId !== undefined);
        const continued = await findChatContinuation(deps.runs.deps.host.log, agent.id, body.input);
        // the continued run is made this node's before the stream opens, so a run another node holds is refused here
        if (continued) await claimRun(deps, continued.started.runId);
        const prepared = await prepare(deps, ctx, agent, body, continued?.started.runId);
        return { kind: 'sse', headers: { ...CHAT_HEADERS, ...conversationHeader(prepared) }, start: (sink) => runChat(deps.runs, prepared, body.input, ctx.signal, sink, continued) };
      },
    },
    {
      method: 'GET',
      path: '/agents/:id/chat/:conversationId/stream',
      auth: 'execution',
      summary: 'Resume the active resumable chat stream of a conversation (SSE)',
      tags,
      query: z.object({ userId: z.string().optional() }),
      produces: 'sse',
      relayFrom: CHAT_FRAMES_ROUTE,
      handler: (ctx) => {
        const key = resumableKey(deps, ctx);
        if (!deps.runs.resumableChats.get(key)) return { kind: 'empty', status: 204 };
        const afterId = lastEventIdOf(ctx.headers);
        return { kind: 'sse', headers: CHAT_HEADERS, start: (sink) => resumeChat(deps.runs, key, sink, afterId) };
      },
    },
    {
      method: 'GET',
      path: '/agents/:id/chat/:conversationId/frames',
      auth: 'execution',
      summary: 'The frames of the active resumable chat stream after a frame id, as JSON (long polling)',
      tags,
      query: z.object({
        userId: z.string().optional(),
        after: z.coerce.number().int().min(0).optional(),
        waitMs: z.coerce.number().int().min(0).max(FRAMES_MAX_WAIT_MS).optional(),
      }),
      handler: async (ctx) => {
        const buffer = deps.runs.resumableChats.get(resumableKey(deps, ctx));
        if (!buffer) throw notFound(`No active resumable chat stream for conversation ${ctx.params.conversationId} on this node`);
        const after = (ctx.query.after as number | undefined) ?? 0;
        const frames = await buffer.framesAfter(after, (ctx.query.waitMs as number | undefined) ?? 0, ctx.signal);
        const text = frames.map((f) => Buffer.from(f).toString('utf8'));
        return { kind: 'json', data: { frames: text, last: after + frames.length, done: buffer.done }, headers: CHAT_HEADERS };
      },
    },
    {
      method: 'POST',
      path: '/agents/:id/object',
      auth: 'execution',
      summary: 'Generate an object matching a JSON Schema',
      tags,
      body: ObjectRequest,
      mergeUser: 'agent',
      handler: async (ctx) => {
        const agent = findAgent(deps, ctx.params.id);
        const prepared = await prepare(deps, ctx, agent, ctx.body);
        return { ...ok(await runObject(deps.runs, prepared, ctx.body.input, ctx.body.schema, ctx.signal)), headers: conversationHeader(prepared) };
      },
    },
    {
      method: 'POST',
      path: '/agents/:id/stream-object',
      auth: 'execution',
      summary: 'Stream partial objects, then the final object (SSE)',
      tags,
      body: ObjectRequest,
      mergeUser: 'agent',
      produces: 'sse',
      handler: async (ctx) => {
        const agent = findAgent(deps, ctx.params.id);
        const prepared = await prepare(deps, ctx, agent, ctx.body);
        return { kind: 'sse', headers: conversationHeader(prepared), start: (sink) => runStreamObject(deps.runs, prepared, ctx.body.input, ctx.body.schema, ctx.signal, sink) };
      },
    },
    {
      method: 'POST',
      path: '/agents/:id/runs/:runId/approvals/:approvalId',
      auth: 'execution',
      summary: 'Approve or deny a tool call a run waits for; continues the run',
      tags,
      body: ApprovalAnswer,
      handler: async (ctx) => {
        const agent = findAgent(deps, ctx.params.id);
        const { runId, approvalId } = ctx.params;
        // a run retention removed says so while its tombstone lasts
        if ((await deps.runs.deps.host.log.streamHead(runStream(runId))) === 0) throw await runNotFound(deps.history, runId, `Run ${runId} of agent ${agent.id} not found`);
        return ok(await answerApproval(deps.runs, { agent, runId, approvalId, answer: ctx.body, headers: ctx.headers, signal: ctx.signal }));
      },
    },
    {
      method: 'GET',
      path: '/agents/:id/history',
      auth: 'management',
      summary: 'Agent run history (newest first)',
      tags,
      query: z.object({ page: z.string().optional(), limit: z.string().optional(), cursor: z.string().min(1).optional().describe('`nextCursor` of the previous page') }),
      response: historyPage,
      handler: async (ctx) => {
        const agent = findAgent(deps, ctx.params.id);
        const { page, limit } = parsePaging(ctx.query);
        return ok(await deps.history.page(agent.id, page, limit, (ctx.query as { cursor?: string }).cursor));
      },
    },
    {
      method: 'GET',
      path: '/agents/:id/runs/:runId',
      auth: 'management',
      summary: 'One run of the agent, as its history entry (404 naming the removal for a run retention removed, while its tombstone lasts)',
      tags,
      response: z.record(z.string(), z.unknown()),
      handler: async (ctx) => {
        const agent = findAgent(deps, ctx.params.id);
        const entry = await readRun(deps.runs.deps.host.log, agent.id, ctx.params.runId);
        if (!entry) throw await runNotFound(deps.history, ctx.params.runId, `Agent run ${ctx.params.runId} not found`);
        return ok(entry);
      },
    },
    {
      method: 'GET',
      path: '/agents/:id/card',
      auth: 'management',
      summary: 'Agent card (agent-to-agent discovery)',
      tags,
      // not cached: the card names the endpoint under the origin the client used
      handler: (ctx) => ok(agentCard(findAgent(deps, ctx.params.id), deps.version, ctx.origin)),
    },
    {
      method: 'GET',
      path: '/.well-known/:id/agent-card.json',
      auth: 'management',
      summary: 'Agent card at the A2A discovery path (bare JSON)',
      tags,
      produces: 'bare-json',
      handler: (ctx) => ({ kind: 'bare-json', body: agentCard(findAgent(deps, ctx.params.id), deps.version, ctx.origin) }),
    },
  ];
}

const TEXT_EXAMPLES: RequestExamples = {
  question: { summary: 'Ask a question', value: { input: 'Hello! What can you do?' } },
  conversation: {
    summary: 'Continue a remembered conversation',
    value: { input: 'And what did I ask you before?', options: { memory: { userId: 'user-1', conversationId: 'conversation-1' } } },
  },
};

const OBJECT_EXAMPLES: RequestExamples = {
  object: {
    summary: 'Ask for a structured answer',
    value: {
      input: 'Describe Paris for a travel guide',
      schema: { type: 'object', properties: { city: { type: 'string' }, summary: { type: 'string' }, sights: { type: 'array', items: { type: 'string' } } }, required: ['city', 'summary'] },
    },
  },
};

/** The API document's view of the agents: their ids for `:id`, and a question or a structured request as bodies. */
export function agentDocs(agents: readonly Pick<Agent, 'id'>[]): ModuleDocs {
  return {
    pathParams: [{ prefix: '/agents/', param: 'id', values: agents.map((a) => a.id) }],
    requestExamples: {
      'POST /agents/:id/text': TEXT_EXAMPLES,
      'POST /agents/:id/stream': TEXT_EXAMPLES,
      'POST /agents/:id/chat': TEXT_EXAMPLES,
      'POST /agents/:id/object': OBJECT_EXAMPLES,
      'POST /agents/:id/stream-object': OBJECT_EXAMPLES,
    },
  };
}
