/**
 * The running memory domain of one server: the projection, the semantic indexer (embedder +
 * vector index), the `MemoryStore`, and the resolution of which memory an `/api/memory` request
 * addresses (docs/api-reference.md "Memory routes": agentId → that agent's memory; else the global memory; else the only
 * agent with memory). Agents' `AgentMemory` hooks are attached to it on start and detached on stop.
 */
import type { Logger } from 'pino';
import { badRequest, notFound } from '../errors.js';
import type { EventLog } from '../log/types.js';
import { MemoryProjection } from './projection.js';
import { AgentMemory } from './agent-memory.js';
import {
  type EmbeddingModelResolver,
  createEmbedder,
  createVectorIndex,
  describeAgentMemory,
  globalMemoryConfig,
  resolveAgentMemory,
  resolveGlobalMemory,
  type AgentMemoryDescription,
  type ResolvedMemory,
} from './config.js';
import type { Embedder } from './embedder.js';
import { SemanticIndexer } from './semantic-index.js';
import { MemoryStore } from './store.js';
import type { VectorIndex } from './vector-index.js';
import { checkWorkingMemoryConfig } from './working-memory.js';

/** What the service needs to know of a registered agent. */
export interface AgentLike {
  id: string;
  memory: unknown;
  subAgents?: readonly AgentLike[];
}

export interface MemoryServiceOptions {
  log: EventLog;
  /** the config's `memory` section */
  memory: unknown;
  providers?: unknown;
  /** resolves an embedding model's name (`openai/<model>`) with the agents' model providers (a port the assembly wires) */
  embeddingModel?: EmbeddingModelResolver;
  env: Record<string, string | undefined>;
  logger: Logger;
  /** the registered (top-level) agents, read at request time */
  agents: () => readonly AgentLike[];
  clock?: () => number;
  /** newest messages kept in memory per recently used conversation (default 20; 0 = none) */
  tailMessages?: number;
  /** the log is shared by several nodes (MemoryStoreOptions.followLog) */
  followLog?: boolean;
}

const EMBEDDER_MISSING = 'Embedding adapter is required for semantic search but not configured';
const VECTOR_MISSING = 'Vector adapter is required for semantic search but not configured';

export class MemoryService {
  readonly store: MemoryStore;
  readonly projection: MemoryProjection;
  readonly embedder: Embedder | undefined;
  readonly index: VectorIndex | undefined;
  readonly semantic: SemanticIndexer | undefined;
  private attached: AgentMemory[] = [];

  constructor(private readonly opts: MemoryServiceOptions) {
    const logger = opts.logger;
    checkWorkingMemoryConfig('config.memory', globalMemoryConfig(opts.memory)?.workingMemory);
    this.projection = new MemoryProjection(opts.log, { onError: (err) => logger.error({ err }, 'memory projection failed'), tailMessages: opts.tailMessages });
    this.embedder = createEmbedder(opts.memory, opts.env, opts.providers, opts.embeddingModel);
    this.index = createVectorIndex(opts.memory);
    if (this.embedder && this.index) {
      const projection = this.projection;
      this.semantic = new SemanticIndexer(
        projection.rowsKv,
        this.embedder,
        this.index,
        (err) => logger.error({ err }, 'semantic index update failed'),
        () => projection.foldsHere,
      );
      this.projection.onChange(this.semantic.listener);
    }
    this.store = new MemoryStore({
      log: opts.log,
      projection: this.projection,
      semantic: this.semantic,
      searchUnavailable: !this.embedder ? EMBEDDER_MISSING : !this.index ? VECTOR_MISSING : undefined,
      clock: opts.clock,
      followLog: opts.followLog,
    });
  }

  /** `memory.enforceTokenUser` (default true). */
  get enforceTokenUser(): boolean {
    return globalMemoryConfig(this.opts.memory)?.enforceTokenUser !== false;
  }

  async start(): Promise<void> {
    await this.projection.start();
    // The index fills in the background; searches wait for it (SemanticIndexer.settled).
    void this.semantic?.load();
    for (const hooks of this.agentMemories()) {
      hooks.attach(this);
      this.attached.push(hooks);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.attached.map((h) => h.flushAll(this).catch(() => undefined)));
    for (const h of this.attached) h.detach(this);
    this.attached = [];
    await this.projection.stop();
  }

  /** The AgentMemory hooks of every registered agent and sub-agent. */
  private agentMemories(): AgentMemory[] {
    const out = new Set<AgentMemory>();
    const visit = (a: AgentLike, seen: Set<AgentLike>) => {
      if (seen.has(a)) return;
      seen.add(a);
      if (a.memory instanceof AgentMemory) out.add(a.memory);
      for (const s of a.subAgents ?? []) visit(s, seen);
    };
    const seen = new Set<AgentLike>();
    for (const a of this.opts.agents()) visit(a, seen);
    return [...out];
  }

  /** The memory settings of an agent's `memory` value (AgentMemory hooks, other hooks, or none). */
  agentSettings(agent: AgentLike): ResolvedMemory | undefined {
    if (agent.memory === null || agent.memory === undefined || agent.memory === false) return undefined;
    if (agent.memory instanceof AgentMemory) return agent.memory.settings(agent.id, this.opts.memory);
    return resolveAgentMemory(agent.id, true, this.opts.memory);
  }

  /**
   * Which memory a request addresses (docs/api-reference.md "Memory routes"): 404 `Agent <id> not found`, 400 `Memory
   * not configured for agent <id>`, 400 `agentId is required when multiple agents are configured`,
   * 400 `Memory not configured`.
   */
  resolve(agentId: string | undefined): ResolvedMemory {
    const agents = this.opts.agents();
    if (agentId !== undefined) {
      const agent = agents.find((a) => a.id === agentId);
      if (!agent) throw notFound(`Agent ${agentId} not found`);
      const settings = this.agentSettings(agent);
      if (!settings) throw badRequest(`Memory not configured for agent ${agentId}`);
      return settings;
    }
    const global = resolveGlobalMemory(this.opts.memory);
    if (global) return global;
    const withMemory = agents.map((a) => this.agentSettings(a)).filter((s): s is ResolvedMemory => s !== undefined);
    if (withMemory.length === 1) return withMemory[0];
    if (withMemory.length > 1) throw badRequest('agentId is required when multiple agents are configured');
    throw badRequest('Memory not configured');
  }

  /** The `memory` object of an agent (null without memory). */
  describeAgent(agentId: string, option: unknown): AgentMemoryDescription | null {
    if (option === null || option === undefined || option === false) return null;
    const own = option instanceof AgentMemory ? option.options : true;
    return describeAgentMemory(agentId, own, this.opts.memory, { embedder: this.embedder, index: this.index });
  }

  logError(err: unknown): void {
    this.opts.logger.error({ err }, 'memory write failed');
  }

  get memoryConfig(): unknown {
    return this.opts.memory;
  }
}
