/**
 * The A2A server (`POST /a2a/:id`): the JSON-RPC binding of A2A v1.0 for every configured agent.
 * A task is an agent run: `SendMessage` / `SendStreamingMessage` start a run (recorded like any
 * other, operation `stream`), and `GetTask`, `SubscribeToTask` and `CancelTask` read and follow the
 * run's records on the log (task-view.ts, follow.ts), so tasks outlive the process that ran them.
 * A message's `contextId` is the run's conversation: an agent with memory continues it.
 */
import type { ServerContext, ServerModule } from '../../contract/server-module.js';
import { a2aRoutes } from './routes.js';
import type { A2aAgents } from './agents-port.js';

export interface A2aDeps {
  agents: A2aAgents | undefined;
}

export function a2aModule(ctx: ServerContext, deps: A2aDeps): ServerModule {
  const log = ctx.log;
  const inFlight = new Set<Promise<void>>();
  const handlerDeps = { log, agents: deps.agents, track: (p: Promise<void>) => (inFlight.add(p), void p.finally(() => inFlight.delete(p))) };
  return {
    name: 'a2a',
    routes: a2aRoutes(handlerDeps),
    // the agents module drains the runs themselves; this only lets their A2A callers finish
    async stop() {
      await Promise.allSettled([...inFlight]);
    },
  };
}
