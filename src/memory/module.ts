/**
 * The memory server module: the memory service (store, projection, semantic index) over the log,
 * started and stopped with the server, and its routes (routes.ts).
 */
import type { ServerContext, ServerModule } from '../contract/server-module.js';
import { MemoryService, type AgentLike } from './service.js';
import type { EmbeddingModelResolver } from './config.js';
import type { MemoryStore } from './store.js';
import { memoryRoutes } from './routes.js';

export interface MemoryModule extends ServerModule {
  name: 'memory';
  /** the store, for agents and workflow steps: `modules.get('memory').store` */
  store: MemoryStore;
  service: MemoryService;
}

const MEMORY_MODULE = 'memory';

export interface MemoryModuleDeps {
  /** the agents registered by the agents module (read at request time: it is created after this one) */
  agents(): readonly AgentLike[];
  /** resolves an embedding model's name with the agents' model providers */
  embeddingModel?: EmbeddingModelResolver;
}

export function memoryModule(ctx: ServerContext, deps: MemoryModuleDeps): MemoryModule {
  const service = new MemoryService({
    log: ctx.log,
    memory: ctx.config.memory,
    providers: ctx.config.providers,
    env: ctx.env,
    logger: ctx.logger.child({ component: 'memory' }),
    agents: deps.agents,
    embeddingModel: deps.embeddingModel,
    followLog: ctx.node.store === 'postgres',
  });
  return {
    name: MEMORY_MODULE,
    routes: memoryRoutes(service),
    store: service.store,
    service,
    start: () => service.start(),
    stop: () => service.stop(),
  };
}
