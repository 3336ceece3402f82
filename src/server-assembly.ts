/**
 * The default assembly of a server: which domain modules run, in which order, and how requests are
 * authenticated. `startServer` (src/main.ts) stays generic; this file is the one list of domains.
 */
import { createAuthenticator, describeAuth, resolveAuthConfig, type AuthConfig } from './http/auth/index.js';
import { startServer, type EventloomServer, type ModuleFactory, type StartOptions } from './main.js';
import { workflowsModule } from './http/routes/workflows.routes.js';
import { agentsModule } from './agents/module.js';
import { memoryModule } from './http/routes/memory.routes.js';
import { observabilityModule } from './observability/module.js';
import { mcpModule } from './mcp/module.js';
import { toolsModule } from './tools/module.js';

// observability first: it installs the log capture before other modules create their child loggers
export const DEFAULT_MODULES: ModuleFactory[] = [observabilityModule, memoryModule, agentsModule, mcpModule, toolsModule, workflowsModule];

export interface DefaultServerOptions extends Omit<StartOptions, 'modules' | 'authenticator'> {
  /** the CLI's --default-private */
  defaultPrivate?: boolean;
}

export function startDefaultServer(options: DefaultServerOptions): Promise<EventloomServer> {
  const { defaultPrivate, ...rest } = options;
  return startServer({
    ...rest,
    modules: DEFAULT_MODULES,
    authenticator: async (ctx) => {
      const auth = await resolveAuthConfig(ctx.config.auth as AuthConfig | undefined, ctx.env, defaultPrivate ? { defaultPrivate } : undefined);
      if (auth) ctx.logger.info({ auth: describeAuth(auth) }, describeAuth(auth));
      // always on: the console routes are guarded in every mode (without JWT auth the check is synchronous and cheap)
      return createAuthenticator(auth, ctx.env);
    },
  });
}
