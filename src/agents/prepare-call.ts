/**
 * Everything one agent call needs before the model is asked: the instructions (static, or computed
 * from the call context), the model, the tools, the prompt messages (memory context first, then the
 * call's own input) and the generation settings. Failures here happen before any stream starts, so
 * the routes can still answer them with a status.
 */
import { randomUUID } from 'node:crypto';
import type { ModelMessage, ToolSet, UIMessage } from 'ai';
import { aiSdk, loadAiSdk } from '../kernel/ai-sdk.js';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { Agent, AgentCallContext, DynamicAgentSettings } from './define-agent.js';
import type { ResolvedCallOptions } from './call-options.js';
import type { AgentMemoryHooks, AgentMemoryScope } from '../contract/memory-hooks.js';
import type { AgentRegistry } from './registry.js';
import type { RunToolContext } from './tool-adapter.js';
import type { Tool } from '../kernel/define-tool.js';

export interface PreparedCall {
  agent: Agent;
  model: LanguageModelV3;
  modelLabel: string;
  system: string | undefined;
  /** memory context, then the call's own messages */
  messages: ModelMessage[];
  /** the call's own messages */
  inputMessages: ModelMessage[];
  /** the client's UI messages, when the input was a UI message list (chat continues them) */
  uiMessages?: UIMessage[];
  tools: ToolSet | undefined;
  toolContext: RunToolContext;
  options: ResolvedCallOptions;
  callContext: AgentCallContext;
  memory?: { hooks: AgentMemoryHooks; scope: AgentMemoryScope };
}

export interface PrepareArgs {
  agent: Agent;
  input: string | Array<Record<string, unknown>>;
  options: ResolvedCallOptions;
  headers: Record<string, string>;
  runId: string;
  /** ancestors' names when this is a sub-agent call */
  parentPath?: string[];
  signal?: AbortSignal;
}

export interface PrepareDeps {
  registry: AgentRegistry;
  /** the agent's tool set (its tools and sub-agent delegation tools); `tools` replaces the static ones */
  toolsFor(agent: Agent, tools?: readonly Tool[]): ToolSet | undefined;
}

function isUiMessage(m: Record<string, unknown>): boolean {
  return Array.isArray(m.parts);
}

/** A string becomes one user message; UI messages are converted; model messages pass as sent. */
async function toModelMessages(input: PrepareArgs['input']): Promise<{ messages: ModelMessage[]; ui?: UIMessage[] }> {
  if (typeof input === 'string') return { messages: [{ role: 'user', content: input }] };
  if (input.every(isUiMessage)) {
    const ui = input.map((m) => ({ ...m, id: typeof m.id === 'string' ? m.id : randomUUID() }) as unknown as UIMessage);
    return { messages: await aiSdk().convertToModelMessages(ui), ui };
  }
  const messages: ModelMessage[] = [];
  for (const m of input) {
    if (isUiMessage(m)) messages.push(...(await aiSdk().convertToModelMessages([m as unknown as UIMessage])));
    else messages.push(m as unknown as ModelMessage);
  }
  return { messages };
}

export async function prepareCall(deps: PrepareDeps, args: PrepareArgs): Promise<PreparedCall> {
  // every agent operation starts here: from now on the call path may use aiSdk()
  await loadAiSdk();
  const { agent, options } = args;
  let conversationId = options.memory.conversationId;
  const userId = options.memory.userId;
  const useMemory = agent.memory !== null && userId !== undefined;
  if (useMemory && conversationId === undefined) conversationId = randomUUID();
  const callContext: AgentCallContext = { context: options.context, headers: args.headers };
  if (userId !== undefined) callContext.userId = userId;
  if (conversationId !== undefined) callContext.conversationId = conversationId;

  let dynamic: DynamicAgentSettings | undefined;
  let system: string | undefined;
  if (typeof agent.instructions === 'string') system = agent.instructions;
  else {
    const r = await agent.instructions(callContext);
    if (typeof r === 'string') system = r;
    else {
      dynamic = r;
      system = r.instructions;
    }
  }
  if (dynamic?.language) system = `${system ?? ''}\n\nAlways answer in ${dynamic.language}.`.trim();
  const { model, label } = await deps.registry.modelFor(agent, callContext, dynamic?.model);
  const tools = deps.toolsFor(agent, dynamic?.tools);
  const { messages: inputMessages, ui } = await toModelMessages(args.input);

  let messages = inputMessages;
  let memory: PreparedCall['memory'];
  if (useMemory) {
    const scope: AgentMemoryScope = { agentId: agent.id, resourceId: agent.id, userId: userId, conversationId: conversationId! };
    memory = { hooks: agent.memory, scope };
    const loaded = await agent.memory.loadContext({
      ...scope,
      input: inputMessages,
      contextLimit: options.memory.contextLimit,
      semanticMemory: options.memory.semanticMemory,
      signal: args.signal ?? new AbortController().signal,
    });
    if (loaded.messages.length > 0) messages = [...loaded.messages, ...inputMessages];
    if (loaded.system) system = system ? `${system}\n\n${loaded.system}` : loaded.system;
  }

  const toolContext: RunToolContext = {
    context: options.context,
    headers: args.headers,
    agentId: agent.id,
    agentName: agent.name,
    runId: args.runId,
    agentPath: [...(args.parentPath ?? []), agent.name],
  };
  if (userId !== undefined) toolContext.userId = userId;
  if (conversationId !== undefined) toolContext.conversationId = conversationId;

  const prepared: PreparedCall = { agent, model, modelLabel: label, system, messages, inputMessages, tools, toolContext, options, callContext };
  if (ui) prepared.uiMessages = ui;
  if (memory) prepared.memory = memory;
  return prepared;
}
