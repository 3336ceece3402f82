/**
 * Agents that remember: `agentMemory(options)` gives the object an agent definition puts in its
 * `memory` field (`AgentMemoryHooks` of src/contract/memory-hooks.ts). The memory module attaches
 * the hooks of every registered agent to its running `MemoryService` on start, so one definition
 * works on whichever server runs it.
 *
 * - `loadContext`: first writes what is still buffered for the conversation (read your writes),
 *   refuses a conversation of another user (404 `Conversation not found: <cid>`), then loads the last `contextLimit` messages (none for 0), semantic hits when semantic memory
 *   is on (explicitly, or automatically when an embedder and a vector index are configured):
 *   the user's messages in this agent's conversations most similar to the call's last user text,
 *   at least `semanticThreshold`, at most `semanticLimit`, merged by `mergeStrategy` (prepend,
 *   append, or interleave by time), and the working memory as a system-prompt section.
 * - `saveMessages`: creates the conversation on first write (`New Chat <ISO time>`, resourceId =
 *   the agent's), then appends. `input` and `finish` saves are written at once; `step` saves wait
 *   `debounceMs` for more steps (one write for a burst), except a step with a tool result when
 *   `flushOnToolResult`, and the run's `final` save, which writes what is buffered and resolves
 *   when it is durable. An `input` that repeats the conversation's latest messages (a chat client
 *   resending the whole thread) only adds what is new.
 */
import type { ModelMessage } from 'ai';
import type { AgentMemoryConfig as AgentMemoryDescriptionConfig, AgentMemoryHooks, AgentMemoryScope, LoadContextArgs, SaveMessagesArgs } from '../contract/memory-hooks.js';
import { describeAgentMemory, resolveAgentMemory, type AgentMemoryConfig, type AgentMemoryDescription, type ResolvedMemory } from './config.js';
import { textOf, toModelMessages, type MessageInput } from './messages.js';
import { conversationNotFound, type MemoryStore, type PendingScope } from './store.js';
import type { Message, MessageRole, StoredMessage } from './types.js';
import { checkWorkingMemoryConfig, workingMemorySection } from './working-memory.js';
import { systemClock, type Clock, type Timer } from '../kernel/clock.js';
import { describedStateChanged } from '../contract/encoded-answers.js';

export type AgentMemoryOptions = AgentMemoryConfig;

/** The memory of an agent definition: `createAgent({ ..., memory: agentMemory({ workingMemory: true }) })`. */
export function agentMemory(options: AgentMemoryOptions = {}): AgentMemory {
  checkWorkingMemoryConfig('agentMemory()', options.workingMemory);
  return new AgentMemory(options);
}

interface Buffer {
  scope: AgentMemoryScope;
  messages: ModelMessage[];
  timer?: Timer;
  /** the last write of this conversation */
  inflight: Promise<void>;
}

/**
 * What the hooks use of a running memory service (service.ts implements it; declared here so the
 * hooks do not import the service that attaches them).
 */
export interface MemoryService {
  readonly store: MemoryStore;
  readonly memoryConfig: unknown;
  describeAgent(agentId: string, option: unknown): AgentMemoryDescription | null;
  logError(err: unknown): void;
}

export class AgentMemory implements AgentMemoryHooks {
  private services: MemoryService[] = [];
  private readonly buffers = new Map<MemoryService, Map<string, Buffer>>();
  /** saveMessages calls not finished yet, per conversation */
  private readonly inflight = new Map<string, Set<Promise<void>>>();
  /** the user of each conversation with writes pending (to settle one user's writes) */
  private readonly owners = new Map<string, string>();
  private readonly unregister = new Map<MemoryService, () => void>();

  constructor(
    readonly options: AgentMemoryOptions = {},
    private readonly clock: Clock = systemClock,
  ) {}

  attach(service: MemoryService): void {
    this.services.push(service);
    this.buffers.set(service, new Map());
    // Store reads of a conversation first write what this agent still holds for it.
    this.unregister.set(
      service,
      service.store.addPendingWrites((scope) => this.settle(service, scope)),
    );
    describedStateChanged(); // the agents' listings describe the memory of the last attached service
  }

  detach(service: MemoryService): void {
    this.services = this.services.filter((s) => s !== service);
    this.buffers.delete(service);
    this.unregister.get(service)?.();
    this.unregister.delete(service);
    describedStateChanged();
  }

  /**
   * Waits until nothing of this agent is pending for `cid` (every conversation when undefined):
   * saves in flight end, saves the run chains after them get their turn, buffers are written.
   * The agents layer answers a call before its last saves run; this is what makes the next
   * call's history (and a GET of the messages) include them.
   */
  private async settle(service: MemoryService, scope: PendingScope): Promise<void> {
    const { conversationId: cid, userId } = scope;
    for (let round = 0; round < 50; round++) {
      const map = this.buffers.get(service);
      let keys = cid !== undefined ? [cid] : [...new Set([...this.inflight.keys(), ...(map?.keys() ?? [])])];
      if (cid === undefined && userId !== undefined) keys = keys.filter((k) => this.owners.get(k) === userId);
      const pending = keys.flatMap((k) => [...(this.inflight.get(k) ?? [])]);
      const buffered = keys.filter((k) => (map?.get(k)?.messages.length ?? 0) > 0);
      if (pending.length === 0 && buffered.length === 0) return;
      await Promise.allSettled([...pending, ...buffered.map((k) => this.flush(service, k))]);
      // let a run's save chain hand over its next save before looking again
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private get service(): MemoryService {
    const s = this.services[this.services.length - 1];
    if (!s) throw new Error('Agent memory is not attached to a running server (is the memory module registered?)');
    return s;
  }

  /** This agent's resolved settings (resourceId, working memory). */
  settings(agentId: string, globalMemory: unknown): ResolvedMemory {
    return resolveAgentMemory(agentId, { ...this.options, enabled: true }, globalMemory)!;
  }

  describe(agentId: string): AgentMemoryDescriptionConfig {
    const s = this.services[this.services.length - 1];
    const d = s ? s.describeAgent(agentId, this) : describeAgentMemory(agentId, { ...this.options, enabled: true }, undefined);
    return d!.config;
  }

  async loadContext(args: LoadContextArgs): Promise<{ messages: ModelMessage[]; system?: string }> {
    const service = this.service;
    const store = service.store;
    await this.settle(service, { conversationId: args.conversationId });
    const conv = await store.getConversation(args.conversationId);
    // Another user's conversation is refused here, before the model runs, as the memory routes refuse it (404, so
    // its existence is not confirmed either): the call could not store its messages there, and answering 200
    // would tell the caller they were.
    if (conv !== undefined && conv.userId !== args.userId) throw conversationNotFound(args.conversationId);
    const own = conv !== undefined;
    const loaded = own && args.contextLimit > 0 ? await store.listMessages(args.conversationId, { limit: args.contextLimit }) : [];
    // a chat client resends the thread: stored messages it repeats are not given twice
    const history = args.input.length > 1 ? loaded.slice(0, loaded.length - repeatedTail(loaded, args.input)) : loaded;
    const hits = await this.semanticHits(service, args, loaded);
    const sem = args.semanticMemory;
    const merged = sem.mergeStrategy === 'prepend' ? [...hits, ...history] : sem.mergeStrategy === 'interleave' ? interleave(history, hits) : [...history, ...hits];
    const settings = this.settings(args.agentId, service.memoryConfig);
    let system: string | undefined;
    const wm = settings.workingMemory;
    if (wm.enabled) {
      const row = wm.scope === 'user' || own ? await store.getWorkingMemory({ scope: wm.scope, conversationId: args.conversationId, userId: args.userId }) : undefined;
      system = workingMemorySection(row?.content, wm);
    }
    const messages = toModelMessages(merged) as unknown as ModelMessage[];
    return system === undefined ? { messages } : { messages, system };
  }

  private async semanticHits(service: MemoryService, args: LoadContextArgs, history: Message[]): Promise<StoredMessage[]> {
    const sem = args.semanticMemory;
    const store = service.store;
    if (!(sem.enabled ?? store.semanticAvailable) || !store.semanticAvailable || sem.semanticLimit <= 0) return [];
    const query = lastUserText(args.input);
    if (query === '') return [];
    const resourceId = this.options.resourceId ?? args.resourceId;
    const seen = new Set(history.map((m) => m.id));
    const results = await store.search(query, { userId: args.userId, limit: Math.min(100, sem.semanticLimit * 4 + seen.size), threshold: sem.semanticThreshold });
    const hits: StoredMessage[] = [];
    for (const r of results) {
      const md = r.metadata ?? {};
      if (md.resourceId !== resourceId || seen.has(r.id)) continue;
      // already in the prompt as part of the call's own input
      if (args.input.some((m) => m.role === md.role && modelText(m) === r.content)) continue;
      hits.push({ id: r.id, role: md.role as MessageRole, parts: [{ type: 'text', text: r.content ?? '' }], metadata: {}, createdAt: String(md.createdAt) });
      if (hits.length === sem.semanticLimit) break;
    }
    return hits;
  }

  saveMessages(args: SaveMessagesArgs): Promise<void> {
    const p = this.save(args);
    let set = this.inflight.get(args.conversationId);
    if (!set) this.inflight.set(args.conversationId, (set = new Set()));
    this.owners.set(args.conversationId, args.userId);
    set.add(p);
    const done = () => {
      set.delete(p);
      if (set.size === 0 && this.inflight.get(args.conversationId) === set) {
        this.inflight.delete(args.conversationId);
        if (!this.buffers.get(this.services[this.services.length - 1])?.has(args.conversationId)) this.owners.delete(args.conversationId);
      }
    };
    p.then(done, done);
    return p;
  }

  private async save(args: SaveMessagesArgs): Promise<void> {
    const service = this.service;
    const buffer = this.buffer(service, args);
    if (args.phase === 'input') {
      buffer.messages.push(...(await this.newInput(service, args)));
      return this.flush(service, args.conversationId);
    }
    buffer.messages.push(...args.messages);
    const p = args.persistence;
    const now = args.final === true || args.phase === 'finish' || p.mode === 'finish' || p.debounceMs <= 0 || (args.hasToolResult === true && p.flushOnToolResult);
    if (now) return this.flush(service, args.conversationId);
    buffer.timer?.cancel();
    buffer.timer = this.clock.setTimer(() => void this.flush(service, args.conversationId).catch((err) => service.logError(err)), p.debounceMs);
  }

  /** Writes everything buffered and waits for saves in flight, for every conversation (server stop). */
  flushAll(service: MemoryService): Promise<void> {
    return this.settle(service, {});
  }

  private buffer(service: MemoryService, scope: AgentMemoryScope): Buffer {
    const map = this.buffers.get(service)!;
    let b = map.get(scope.conversationId);
    if (!b) map.set(scope.conversationId, (b = { scope, messages: [], inflight: Promise.resolve() }));
    b.scope = scope;
    return b;
  }

  /** Writes the conversation's buffered messages (after its previous write) and waits for it. */
  private async flush(service: MemoryService, cid: string): Promise<void> {
    const map = this.buffers.get(service);
    const b = map?.get(cid);
    if (!map || !b) return;
    b.timer?.cancel();
    b.timer = undefined;
    const messages = b.messages;
    b.messages = [];
    if (messages.length) {
      const { scope } = b;
      const write = () =>
        service.store
          .appendMessages(cid, scope.userId, messages.map(toInput), { resourceId: this.options.resourceId ?? scope.resourceId, title: `New Chat ${new Date().toISOString()}` })
          .then(() => undefined);
      b.inflight = b.inflight.then(write, write);
    }
    const mine = b.inflight;
    try {
      await mine;
    } finally {
      if (b.messages.length === 0 && b.inflight === mine && map.get(cid) === b && !b.timer) {
        map.delete(cid);
        if (!this.inflight.has(cid)) this.owners.delete(cid);
      }
    }
  }

  /** The input messages not already at the end of the stored conversation. */
  private async newInput(service: MemoryService, args: SaveMessagesArgs): Promise<ModelMessage[]> {
    const input = args.messages;
    if (input.length <= 1) return input;
    const conv = await service.store.getConversation(args.conversationId, false);
    if (!conv) return input;
    const tail = await service.store.listMessages(args.conversationId, { limit: input.length }, false);
    for (let k = Math.min(tail.length, input.length); k > 0; k--) {
      const stored = tail.slice(tail.length - k);
      if (stored.every((m, i) => sameMessage(m, input[i]))) return input.slice(k);
    }
    return input;
  }
}

/** The largest k such that the last k stored messages appear, in order and contiguous, in `input`. */
function repeatedTail(stored: readonly Message[], input: readonly ModelMessage[]): number {
  for (let k = Math.min(stored.length, input.length); k > 0; k--) {
    const tail = stored.slice(stored.length - k);
    for (let j = 0; j + k <= input.length; j++) if (tail.every((m, i) => sameMessage(m, input[j + i]))) return k;
  }
  return 0;
}

function toInput(m: ModelMessage): MessageInput {
  return { role: m.role, content: m.content as MessageInput['content'] };
}

function modelText(m: ModelMessage): string {
  if (typeof m.content === 'string') return m.content;
  return textOf(m.content as Array<{ type: string; [k: string]: unknown }>);
}

function sameMessage(stored: Message, m: ModelMessage): boolean {
  return stored.role === m.role && stored.content === modelText(m);
}

function lastUserText(messages: readonly ModelMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') return modelText(messages[i]).trim();
  return '';
}

/** Both lists merged by createdAt (stable: history first on ties). */
function interleave(history: readonly Message[], hits: readonly StoredMessage[]): StoredMessage[] {
  const all = [...history.map((m, i) => ({ m: m, k: 0, i })), ...hits.map((m, i) => ({ m, k: 1, i }))];
  all.sort((a, b) => (a.m.createdAt < b.m.createdAt ? -1 : a.m.createdAt > b.m.createdAt ? 1 : a.k - b.k || a.i - b.i));
  return all.map((x) => x.m);
}
