/**
 * The agent-run service: prepares calls, starts runs (one actor each) and owns what all operations
 * share: tool sets (an agent's tools plus one delegation tool per sub-agent), the SDK call settings,
 * client-disconnect handling, and closing runs that a restart interrupted. The five operations live
 * in ops-text.ts, ops-stream.ts and ops-object.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Schema, Tool as AiTool, ToolSet } from 'ai';
import { aiSdk } from '../kernel/ai-sdk.js';
import type { Logger } from 'pino';
import type { ActorHost } from '../runtime/actor-host.js';
import { runStream, type AgentOperationType, type AgentRunStarted } from '../../machines/agent-run.machine.js';
import { traceIdFor } from '../kernel/span-types.js';
import type { Agent } from './define-agent.js';
import type { AgentRegistry } from './registry.js';
import type { ResolvedCallOptions } from './call-options.js';
import { prepareCall, type PrepareArgs, type PreparedCall } from './prepare-call.js';
import { createAgentRunKind, type RunEffect } from './run-kind.js';
import { AgentRun, type RunDeps } from './run-session.js';
import { MemoryWriter } from './memory-writer.js';
import { delegationToolName, toToolSet, type RunToolContext } from './tool-adapter.js';
import { ResumableChats } from './resumable-chat.js';
import type { Tool } from '../kernel/define-tool.js';

export interface AgentRunsDeps {
  host: ActorHost;
  logger: Logger;
  registry: AgentRegistry;
}

/** An approval of a run an `andAgent` step started: answered by resuming the step's workflow execution. */
interface WorkflowApprovalRequest {
  workflowId: string;
  executionId: string;
  stepId: string;
  agentId: string;
  runId: string;
  approvalId: string;
  answer: { approved: boolean; reason?: string };
}

/** Installed by the composition root when the workflows module is loaded (the agents module does not import it). */
export interface WorkflowApprovals {
  resume(req: WorkflowApprovalRequest): Promise<Record<string, unknown>>;
}

/** Runs a sub-agent for its parent's delegation tool (installed by ops-text.ts to avoid an import cycle). */
export type SubAgentRunner = (sub: Agent, task: string, parent: RunToolContext, signal: AbortSignal | undefined) => Promise<string>;

const DISCONNECT_REASON = 'Client disconnected';
let delegationInput: Schema<{ task: string }> | undefined;
/** The delegation tools' input schema, made once the SDK is loaded (the first call prepares it). */
const delegationInputSchema = () =>
  (delegationInput ??= aiSdk().jsonSchema<{ task: string }>({
    type: 'object',
    properties: { task: { type: 'string', description: 'What the sub-agent should do, with every detail it needs.' } },
    required: ['task'],
    additionalProperties: false,
  }));

export class AgentRuns {
  readonly sessions = new Map<string, RunEffect>();
  readonly kind = createAgentRunKind(this.sessions);
  readonly runDeps: RunDeps;
  /** active resumable `/chat` generations (docs/api-reference.md "Chat streams") */
  readonly resumableChats = new ResumableChats();
  private readonly toolSets = new WeakMap<Agent, { tools: readonly Tool[]; set: ToolSet | null }>();
  subAgentRunner: SubAgentRunner | undefined;
  workflowApprovals: WorkflowApprovals | undefined;

  constructor(readonly deps: AgentRunsDeps) {
    this.runDeps = { host: deps.host, kind: this.kind, sessions: this.sessions, logger: deps.logger };
  }

  get registry(): AgentRegistry {
    return this.deps.registry;
  }

  get logger(): Logger {
    return this.deps.logger;
  }

  /** The agent's tools plus its delegation tools; `tools` (from dynamic instructions) replaces the static ones. */
  toolsFor(agent: Agent, tools?: readonly Tool[]): ToolSet | undefined {
    // registry.toolsOf adds the tools given to the agent after boot (MCP); its array changes when they do
    if (tools === undefined) {
      const all = this.deps.registry.toolsOf(agent);
      let cached = this.toolSets.get(agent);
      if (cached === undefined || cached.tools !== all) {
        cached = { tools: all, set: this.buildToolSet(agent, all) };
        this.toolSets.set(agent, cached);
      }
      return cached.set ?? undefined;
    }
    return this.buildToolSet(agent, this.deps.registry.toolsOf(agent, tools)) ?? undefined;
  }

  private buildToolSet(agent: Agent, tools: readonly Tool[]): ToolSet | null {
    if (tools.length === 0 && agent.subAgents.length === 0) return null;
    const delegation: ToolSet = {};
    for (const sub of agent.subAgents) delegation[delegationToolName(sub.id)] = this.delegationTool(sub);
    return toToolSet(tools, delegation);
  }

  private delegationTool(sub: Agent): AiTool {
    return aiSdk().tool<{ task: string }, string>({
      description: `Delegate a task to the ${sub.name} agent.${sub.description ? ` ${sub.description}` : ''}`,
      inputSchema: delegationInputSchema(),
      execute: ({ task }, opts) => {
        const parent = opts.experimental_context as RunToolContext;
        if (!this.subAgentRunner) throw new Error('Sub-agent delegation is not available');
        return this.subAgentRunner(sub, task, parent, opts.abortSignal);
      },
    });
  }

  prepare(args: PrepareArgs): Promise<PreparedCall> {
    return prepareCall({ registry: this.deps.registry, toolsFor: (a, t) => this.toolsFor(a, t) }, args);
  }

  /** A run of a prepared call (not started: `run.start(executor)` records `run.started`). */
  newRun(prepared: PreparedCall, operationType: AgentOperationType, input: unknown, extra: { metadata?: Record<string, unknown>; schema?: unknown; traceId?: string } = {}): AgentRun {
    const started: Omit<AgentRunStarted, 'runId'> = {
      agentId: prepared.agent.id,
      operationType,
      input,
      options: recordedOptions(prepared.options),
      model: prepared.modelLabel,
    };
    const { userId, conversationId } = prepared.callContext;
    if (userId !== undefined) started.userId = userId;
    if (conversationId !== undefined) started.conversationId = conversationId;
    if (extra.metadata !== undefined) started.metadata = extra.metadata;
    if (extra.schema !== undefined) started.schema = extra.schema;
    // a run linked to a caller whose trace is unknown here records none: the projection then follows the link
    const linked = extra.metadata?.parentRunId !== undefined || extra.metadata?.executionId !== undefined;
    const traceId = extra.traceId ?? this.traceOfRun(extra.metadata?.parentRunId) ?? (linked ? undefined : traceIdFor(runStream(prepared.toolContext.runId)));
    if (traceId !== undefined) started.traceId = traceId;
    return new AgentRun(this.runDeps, started, prepared.toolContext.runId, MemoryWriter.for(prepared, this.deps.logger));
  }

  /** A paused run, continued in this process (its `run.started` is recorded already). */
  pausedRun(prepared: PreparedCall, started: AgentRunStarted): AgentRun {
    const { runId, ...rest } = started;
    return new AgentRun(this.runDeps, rest, runId, MemoryWriter.for(prepared, this.deps.logger));
  }

  /** The trace of a run in flight in this process (a sub-agent's parent is: it waits for the delegation). */
  private traceOfRun(runId: unknown): string | undefined {
    if (typeof runId !== 'string') return undefined;
    const s = this.sessions.get(runStream(runId));
    return s instanceof AgentRun ? s.started.traceId : undefined;
  }

  /** Cancels the run when the client goes away, unless `onDisconnect` is `continue`. Returns the unbind. */
  bindDisconnect(signal: AbortSignal | undefined, run: AgentRun, options: ResolvedCallOptions): () => void {
    if (!signal || options.onDisconnect === 'continue') return noop;
    const onAbort = () => run.controller.abort(new DOMException(DISCONNECT_REASON, 'AbortError'));
    if (signal.aborted) {
      onAbort();
      return noop;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
  }

  /** Closes runs that a restart interrupted (their effect cannot be resumed: the caller is gone); runs waiting for approvals stay. */
  async closeInterrupted(runIds: string[]): Promise<number> {
    let closed = 0;
    for (const runId of runIds) {
      try {
        // a run waiting for an approval is not interrupted: its state is in the log, any node continues it
        const res = await this.deps.host.send(this.kind, runStream(runId), (snapshot) =>
          snapshot.value === 'awaitingApproval' ? [] : { type: 'run.failed', error: 'Interrupted by a server restart before the run finished' },
        );
        if (res.records.length > 0) closed++;
      } catch (err) {
        this.deps.logger.warn({ err, runId }, 'could not close an interrupted agent run');
      }
    }
    return closed;
  }

  /**
   * Graceful stop: lets in-flight runs finish for up to `graceMs`, then aborts the rest (recorded as
   * aborted with `reason`) and waits up to `abortWaitMs` for those records.
   */
  async drain(graceMs: number, reason = 'Server shutting down', abortWaitMs = 1000, pollMs = 20): Promise<void> {
    const until = async (deadline: number) => {
      while (this.sessions.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, pollMs).unref());
    };
    await until(Date.now() + graceMs);
    if (this.sessions.size === 0) return;
    for (const s of this.sessions.values()) (s as AgentRun).controller.abort(new DOMException(reason, 'AbortError'));
    await until(Date.now() + abortWaitMs);
  }
}

const noop = () => {};

/** The options as recorded in `run.started` (everything resolved, `context` included as sent). */
function recordedOptions(o: ResolvedCallOptions): Record<string, unknown> {
  return o as unknown as Record<string, unknown>;
}

/** Generation settings shared by every SDK call of a prepared call (text, stream and object). */
export function callSettings(p: PreparedCall) {
  const o = p.options;
  const s = {
    model: p.model,
    system: p.system,
    messages: p.messages,
    temperature: o.temperature,
    maxOutputTokens: o.maxOutputTokens,
    topP: o.topP,
    frequencyPenalty: o.frequencyPenalty,
    presencePenalty: o.presencePenalty,
    seed: o.seed,
    providerOptions: o.providerOptions as never,
    experimental_telemetry: telemetrySettings(p.agent),
    // clients may send system messages (docs/api-reference.md "Generation options"); without this the SDK warns on the console each time
    allowSystemInMessages: true,
    maxRetries: 0,
  };
  return s;
}

/** The tool loop of text and stream calls; tools see the caller's context through `experimental_context`. */
export function toolLoopSettings(p: PreparedCall) {
  return { tools: p.tools, stopWhen: aiSdk().stepCountIs(p.options.maxSteps), stopSequences: p.options.stopSequences, experimental_context: p.toolContext };
}

function telemetrySettings(agent: Agent): { isEnabled: boolean; functionId?: string; metadata?: Record<string, string | number | boolean> } | undefined {
  const t = agent.telemetry;
  if (!t) return undefined;
  if (t === true) return { isEnabled: true, functionId: agent.id };
  return { isEnabled: true, functionId: t.functionId ?? agent.id, metadata: t.metadata };
}

export const newRunId = () => randomUUID();
