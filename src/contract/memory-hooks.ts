/**
 * The seam between agents and memory. An agent's `memory` field holds an object implementing
 * `AgentMemoryHooks` (the memory module provides it); without one the agent has no memory (`memory:
 * null` in the listing) and nothing is read or written.
 *
 * What the run does with it (docs/api-reference.md "Memory in agent calls"):
 * - no `userId` → memory is not touched at all;
 * - `userId` without `conversationId` → the run picks a new conversation id (UUID v4) for this call;
 * - before the model is called: `loadContext` returns earlier messages, which are put before the
 *   call's own messages; it throws (an AppError: 404 `Conversation not found: <cid>`) for a
 *   conversation of another user, so the call is refused before the model runs;
 * - unless `readOnly`: `saveMessages` with phase `input` (the call's new messages) once the run has
 *   started, then phase `step` after every finished step (persistence mode `step`) or one `finish`
 *   call with every response message (mode `finish`). Debouncing (`debounceMs`) and conversation
 *   creation on first write are the implementation's business. A save failure is logged, never
 *   turned into a failed generation.
 * - the run's last save carries `final: true` (possibly with no messages): everything still buffered
 *   for the conversation is written at once and the promise resolves when it is durable. The run
 *   waits for it before the client sees the call finished (its response, or a stream's last frame).
 */
import type { ModelMessage } from 'ai';

/** The `MemoryConfig` of docs/api-reference.md "Agent shapes" (the listing repeats its keys next to `config`). */
export interface AgentMemoryConfig {
  type: string;
  resourceId: string;
  storage: { adapter: string };
  workingMemory: null | { enabled: true; scope: 'conversation' | 'user'; format: 'markdown' | 'json'; hasTemplate: boolean; hasSchema: boolean };
  vectorDB: null | { adapter: string; dimension: number };
  embeddingModel: null | { model: string; dimension: number };
}

export interface ResolvedSemanticMemory {
  /** undefined = enabled when vectors are available (the implementation decides) */
  enabled?: boolean;
  semanticLimit: number;
  semanticThreshold: number;
  mergeStrategy: 'prepend' | 'append' | 'interleave';
}

export interface ResolvedPersistence {
  mode: 'step' | 'finish';
  debounceMs: number;
  flushOnToolResult: boolean;
}

export interface AgentMemoryScope {
  agentId: string;
  /** defaults to the agent id */
  resourceId: string;
  userId: string;
  conversationId: string;
}

export interface LoadContextArgs extends AgentMemoryScope {
  /** the call's own new messages (what the user just said), for semantic retrieval */
  input: ModelMessage[];
  contextLimit: number;
  semanticMemory: ResolvedSemanticMemory;
  signal: AbortSignal;
}

export interface SaveMessagesArgs extends AgentMemoryScope {
  /** messages to append, in order */
  messages: ModelMessage[];
  /** `input`: the call's messages; `step`: one finished step's response messages; `finish`: all response messages */
  phase: 'input' | 'step' | 'finish';
  persistence: ResolvedPersistence;
  /** set on `step` saves that contain a tool result or tool error (`flushOnToolResult`) */
  hasToolResult?: boolean;
  /** the run's last save: write everything buffered now (no debounce), resolve once durable */
  final?: boolean;
}

export interface AgentMemoryHooks {
  /** The description shown by `GET /agents` (`config` + repeated keys are added by the agents module). */
  describe(agentId: string): AgentMemoryConfig;
  /** Earlier messages of the conversation (oldest first), at most `contextLimit` plus semantic hits. */
  loadContext(args: LoadContextArgs): Promise<{ messages: ModelMessage[]; system?: string }>;
  saveMessages(args: SaveMessagesArgs): Promise<void>;
}

export function isAgentMemoryHooks(value: unknown): value is AgentMemoryHooks {
  const v = value as Partial<AgentMemoryHooks> | null | undefined;
  return !!v && typeof v.describe === 'function' && typeof v.loadContext === 'function' && typeof v.saveMessages === 'function';
}
