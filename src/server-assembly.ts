/**
 * The default assembly of a server: which domain modules run, in which order, and how requests are
 * authenticated. `startServer` (src/main.ts) stays generic; this file is the one list of domains.
 */
import { startServer, type EventloomServer, type ModuleFactory, type StartOptions } from './main.js';

export const DEFAULT_MODULES: ModuleFactory[] = [];

export interface DefaultServerOptions extends Omit<StartOptions, 'modules' | 'authenticator'> {
  /** the CLI's --default-private */
  defaultPrivate?: boolean;
}

export function startDefaultServer(options: DefaultServerOptions): Promise<EventloomServer> {
  return startServer({ ...options, modules: DEFAULT_MODULES });
}
