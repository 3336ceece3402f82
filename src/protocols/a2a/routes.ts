/**
 * The A2A route (`POST /a2a/:id`) and its JSON-RPC methods: a message starts a run of the agent
 * (through the A2A port of module.ts); tasks are read and followed on the log.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { userIdentity, type RequestContext, type RouteDef, type RouteResult } from '../../contract/routes.js';
import { AppError, formatIssues } from '../../errors.js';
import type { EventLog } from '../../log/types.js';
import { invalidParams, parseRpcRequest, rpcAnswer, rpcError, RpcError, rpcResult, RPC_ERRORS, taskNotFound, type RpcId } from './rpc.js';
import { isTerminal, taskStatus, toTask, type RunView } from './task-view.js';
import { readRun, untilStarted, untilTerminal } from './follow.js';
import { streamRun } from './task-stream.js';

import type { A2aAgent, A2aAgents } from './agents-port.js';

/** The user a run records when the caller has no identity (no JWT auth) and names none in the metadata. */
const A2A_DEFAULT_USER = 'a2a';
const CANCEL_REASON = 'Cancelled by the A2A client';
/** How long `CancelTask` waits for the aborted run's terminal record. */
const CANCEL_WAIT_MS = 10_000;

const Part = z.object({ text: z.string().optional(), data: z.unknown().optional() }).passthrough();
const SendParams = z.object({
  message: z.object({
    messageId: z.string().min(1),
    role: z.string().optional(),
    parts: z.array(Part).min(1),
    contextId: z.string().min(1).optional(),
    taskId: z.string().min(1).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  }),
  configuration: z.object({ returnImmediately: z.boolean().optional(), historyLength: z.number().int().optional() }).passthrough().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
type SendParams = z.infer<typeof SendParams>;
const TaskParams = z.object({ id: z.string().min(1), historyLength: z.number().int().min(0).optional() });

function parse<T>(schema: z.ZodType<T>, params: unknown): T {
  const r = schema.safeParse(params);
  if (!r.success) throw invalidParams(formatIssues(r.error.issues, 'params'));
  return r.data;
}

/** `POST /a2a/:id`: the JSON-RPC endpoint of each agent. */
export function a2aRoutes(deps: HandlerDeps): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/a2a/:id',
      auth: 'execution',
      summary: 'A2A JSON-RPC endpoint of an agent (SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask)',
      tags: ['A2A'],
      produces: 'bare-json',
      handler: (rctx) => handleRpc(deps, rctx),
    },
  ];
}

export interface HandlerDeps {
  log: EventLog;
  agents: A2aAgents | undefined;
  track(p: Promise<void>): void;
}

async function handleRpc(deps: HandlerDeps, ctx: RequestContext): Promise<RouteResult> {
  const agent = deps.agents?.get(ctx.params.id);
  // an unknown agent is a missing resource of the HTTP API (404 envelope), as for the card routes
  if (!agent) throw new AppError('NOT_FOUND', `Agent ${ctx.params.id} not found`);
  const req = parseRpcRequest(ctx.body);
  if ('error' in req) return rpcAnswer(rpcError(req.id, req.error));
  try {
    return await dispatch(deps, ctx, agent, req.id, req.method, req.params);
  } catch (err) {
    if (err instanceof RpcError) return rpcAnswer(rpcError(req.id, err));
    const message = err instanceof Error ? err.message : String(err);
    return rpcAnswer(rpcError(req.id, new RpcError(RPC_ERRORS.INTERNAL_ERROR, message)));
  }
}

function dispatch(deps: HandlerDeps, ctx: RequestContext, agent: A2aAgent, id: RpcId, method: string, params: Record<string, unknown>): Promise<RouteResult> | RouteResult {
  switch (method) {
    case 'SendMessage':
      return sendMessage(deps, ctx, agent, id, parse(SendParams, params));
    case 'SendStreamingMessage':
      return sendStreamingMessage(deps, ctx, agent, id, parse(SendParams, params));
    case 'GetTask': {
      const p = parse(TaskParams, params);
      return loadTask(deps, ctx, agent, p.id).then(({ view }) => rpcAnswer(rpcResult(id, toTask(view, p.historyLength))));
    }
    case 'CancelTask':
      return cancelTask(deps, ctx, agent, id, parse(TaskParams, params).id);
    case 'SubscribeToTask':
      return subscribeToTask(deps, ctx, agent, id, parse(TaskParams, params).id);
    case 'CreateTaskPushNotificationConfig':
    case 'GetTaskPushNotificationConfig':
    case 'ListTaskPushNotificationConfigs':
    case 'DeleteTaskPushNotificationConfig':
      throw new RpcError(RPC_ERRORS.PUSH_NOTIFICATION_NOT_SUPPORTED, 'Push notifications are not supported: stream the task or subscribe to it');
    case 'GetExtendedAgentCard':
      throw new RpcError(RPC_ERRORS.EXTENDED_CARD_NOT_CONFIGURED, 'This agent has no extended agent card');
    default:
      throw new RpcError(RPC_ERRORS.METHOD_NOT_FOUND, `Method not found: ${method}`);
  }
}

/** The caller's identity (JWT), else a `userId` in the message or request metadata, else the A2A default user. */
function callerUser(ctx: RequestContext, p: SendParams): string {
  const fromToken = ctx.user && userIdentity(ctx.user);
  if (fromToken) return fromToken;
  for (const m of [p.message.metadata, p.metadata]) if (typeof m?.userId === 'string' && m.userId !== '') return m.userId;
  return A2A_DEFAULT_USER;
}

/**
 * A task of this agent that the caller may see: another agent's run, or (with JWT auth) another
 * user's, is not found rather than forbidden, so ids of others' tasks reveal nothing.
 */
async function loadTask(deps: HandlerDeps, ctx: RequestContext, agent: A2aAgent, taskId: string): Promise<{ view: RunView; head: number }> {
  const { view, head } = await readRun(deps.log, taskId);
  if (!view || view.stored.agentId !== agent.id) throw taskNotFound(taskId);
  const caller = ctx.user && userIdentity(ctx.user);
  if (caller !== undefined && view.stored.entry.userId !== undefined && view.stored.entry.userId !== caller) throw taskNotFound(taskId);
  return { view, head };
}

/**
 * Starts the run of a message in the background (it goes on when the client leaves: an A2A task is
 * fetched or subscribed to later). Resolves once the run is prepared, with the global position to
 * follow its records from and the promise of its end.
 */
async function startRun(deps: HandlerDeps, ctx: RequestContext, agent: A2aAgent, p: SendParams): Promise<{ runId: string; head: number; done: Promise<void> }> {
  if (p.message.taskId !== undefined) {
    // a task is one run and ends with it: a follow-up message starts a new task in the same context
    await loadTask(deps, ctx, agent, p.message.taskId);
    throw new RpcError(
      RPC_ERRORS.UNSUPPORTED_OPERATION,
      `Task ${p.message.taskId} takes no further messages: send the message with its contextId (without taskId) to continue the conversation in a new task`,
    );
  }
  const text = p.message.parts.flatMap((part) => (typeof part.text === 'string' ? [part.text] : [])).join('\n');
  if (text === '') throw invalidParams('message.parts: at least one text part is required (the agents take text)');
  let prepared;
  try {
    prepared = await agent.prepare({ text, userId: callerUser(ctx, p), conversationId: p.message.contextId ?? randomUUID(), headers: ctx.headers, signal: ctx.signal });
  } catch (err) {
    throw new RpcError(RPC_ERRORS.INTERNAL_ERROR, err instanceof Error ? err.message : String(err));
  }
  const head = deps.log.head();
  const done = prepared.run();
  deps.track(done);
  return { runId: prepared.runId, head, done };
}

async function sendMessage(deps: HandlerDeps, ctx: RequestContext, agent: A2aAgent, id: RpcId, p: SendParams): Promise<RouteResult> {
  const { runId, head, done } = await startRun(deps, ctx, agent, p);
  if (p.configuration?.returnImmediately) {
    const view = await untilStarted(deps.log, runId, head, done);
    return rpcAnswer(rpcResult(id, { task: toTask(view, p.configuration.historyLength) }));
  }
  await done;
  const { view } = await readRun(deps.log, runId);
  if (!view) throw new RpcError(RPC_ERRORS.INTERNAL_ERROR, 'The run could not be started');
  return rpcAnswer(rpcResult(id, { task: toTask(view, p.configuration?.historyLength) }));
}

async function sendStreamingMessage(deps: HandlerDeps, ctx: RequestContext, agent: A2aAgent, id: RpcId, p: SendParams): Promise<RouteResult> {
  const { runId, head, done } = await startRun(deps, ctx, agent, p);
  // the stream opens with the task, so it opens once the task exists (or answers the error)
  const view = await untilStarted(deps.log, runId, head, done);
  return streamRun(deps.log, id, runId, { head, view });
}

/**
 * A subscription starts with the task as the log holds it. A task that already ended (a restart
 * closes the runs it interrupted) gets that one event and the stream ends, so a client reconnecting
 * after a broken stream learns the outcome instead of an error.
 */
async function subscribeToTask(deps: HandlerDeps, ctx: RequestContext, agent: A2aAgent, id: RpcId, taskId: string): Promise<RouteResult> {
  const from = await loadTask(deps, ctx, agent, taskId);
  return streamRun(deps.log, id, taskId, from);
}

async function cancelTask(deps: HandlerDeps, ctx: RequestContext, agent: A2aAgent, id: RpcId, taskId: string): Promise<RouteResult> {
  const from = await loadTask(deps, ctx, agent, taskId);
  if (isTerminal(from.view)) throw new RpcError(RPC_ERRORS.TASK_NOT_CANCELABLE, `Task not cancelable: ${taskId} has already ended (${String(taskStatus(from.view).state)})`);
  if (!agent.cancel(taskId, CANCEL_REASON)) throw new RpcError(RPC_ERRORS.TASK_NOT_CANCELABLE, `Task not cancelable: ${taskId} is running on another node`);
  const view = await untilTerminal(deps.log, taskId, from, CANCEL_WAIT_MS);
  return rpcAnswer(rpcResult(id, toTask(view)));
}
