/**
 * The registered agents of a server: the config's `agents` section (an array, or a record whose
 * values are agents) checked and indexed by id, with each static model resolved once at startup so
 * a missing API key or base URL fails the boot with a message naming the variable (models/registry).
 * Sub-agents are resolved too, but only top-level agents are addressable by id.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { isAgent, type Agent, type AgentCallContext, type ModelSpec } from './define-agent.js';
import type { Tool } from '../kernel/define-tool.js';
import { resolveModel, type Env, type ProvidersConfig } from './models/registry.js';
import { describedStateChanged } from '../contract/encoded-answers.js';

export interface ModelChoice {
  model: LanguageModelV3;
  /** what the API shows as `model` */
  label: string;
}

export class AgentRegistry {
  private readonly byId = new Map<string, Agent>();
  private readonly staticModels = new WeakMap<Agent, ModelChoice>();
  private readonly namedModels = new Map<string, ModelChoice>();
  private readonly added = new WeakMap<Agent, { tools: Tool[]; all: readonly Tool[] }>();

  constructor(
    agents: unknown,
    private readonly env: Env,
    private readonly providers?: ProvidersConfig,
  ) {
    const list = agents === undefined ? [] : Array.isArray(agents) ? agents : Object.values(agents as Record<string, unknown>);
    for (const a of list) {
      if (!isAgent(a)) throw new TypeError('config.agents must contain agents created with createAgent()');
      if (this.byId.has(a.id)) throw new TypeError(`Two agents have the id ${a.id}`);
      this.byId.set(a.id, a);
      this.prepare(a, new Set());
    }
  }

  private prepare(agent: Agent, seen: Set<Agent>): void {
    if (seen.has(agent)) throw new TypeError(`Agent ${agent.id} is its own sub-agent`);
    if (!this.staticModels.has(agent) && typeof agent.model !== 'function') {
      this.staticModels.set(agent, this.choose(agent.model));
    }
    const next = new Set(seen).add(agent);
    for (const s of agent.subAgents) this.prepare(s, next);
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: string): Agent | undefined {
    return this.byId.get(id);
  }

  list(): Agent[] {
    return [...this.byId.values()];
  }

  /**
   * Adds tools to an agent after the config was loaded (the MCP module adds the tools of the servers
   * an agent names in `mcpServers` once they are connected). An added tool never shadows one of the
   * agent's own tools of the same name.
   */
  addTools(agent: Agent, tools: readonly Tool[]): void {
    const entry = this.added.get(agent) ?? { tools: [], all: agent.tools };
    entry.tools.push(...tools);
    entry.all = Object.freeze(withAdded(agent.tools, entry.tools));
    this.added.set(agent, entry);
    describedStateChanged();
  }

  /** The tools a call of the agent offers: `own` (default: the agent's tools), then the added ones. */
  toolsOf(agent: Agent, own: readonly Tool[] = agent.tools): readonly Tool[] {
    const entry = this.added.get(agent);
    if (!entry) return own;
    return own === agent.tools ? entry.all : withAdded(own, entry.tools);
  }

  /** `model` of the listing: the model id, `dynamic` when a function picks it per call. */
  modelLabel(agent: Agent): string {
    if (typeof agent.model === 'function') return 'dynamic';
    return this.staticModels.get(agent)?.label ?? 'unknown';
  }

  /** The model of one call: dynamic settings first, then the agent's own model (static or per call). */
  async modelFor(agent: Agent, ctx: AgentCallContext, override?: ModelSpec): Promise<ModelChoice> {
    if (override !== undefined) return this.choose(override);
    if (typeof agent.model === 'function') return this.choose(await agent.model(ctx));
    let m = this.staticModels.get(agent);
    if (!m) this.staticModels.set(agent, (m = this.choose(agent.model)));
    return m;
  }

  private choose(spec: ModelSpec | undefined): ModelChoice {
    if (spec !== undefined && typeof spec !== 'string') {
      const r = resolveModel(spec, this.env, this.providers);
      return { model: r.model, label: r.id };
    }
    const key = spec ?? '';
    let m = this.namedModels.get(key);
    if (!m) {
      const r = resolveModel(spec, this.env, this.providers);
      this.namedModels.set(key, (m = { model: r.model, label: r.id }));
    }
    return m;
  }
}

function withAdded(own: readonly Tool[], added: readonly Tool[]): Tool[] {
  const names = new Set(own.map((t) => t.name));
  const out = [...own];
  for (const t of added) {
    if (names.has(t.name)) continue;
    names.add(t.name);
    out.push(t);
  }
  return out;
}
