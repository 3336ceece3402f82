/**
 * What `eventloom start` tells a person at start-up: a short banner (where the server is, what it
 * hosts, which model answers, where data goes, how requests are authenticated, which config file),
 * and the logger the rest of the run writes through: readable lines (pino-pretty) when a person
 * watches, JSON lines for machines.
 */
import pino, { type Logger } from 'pino';
import type { EventloomServer } from '../main.js';
import { LOG_SERIALIZERS } from '../observability/log-errors.js';
import type { AgentsModule } from '../agents/module.js';
import type { WorkflowsModule } from '../workflows/module.js';
import type { ToolsModule } from '../tools/module.js';

export type LogFormat = 'json' | 'pretty';

/** `pretty` on a terminal, `json` when stdout is a pipe or a file (unless the flag says otherwise). */
export function chooseLogFormat(flag: LogFormat | undefined, stdoutIsTty: boolean): LogFormat {
  return flag ?? (stdoutIsTty ? 'pretty' : 'json');
}

export async function createCliLogger(format: LogFormat, env: NodeJS.ProcessEnv): Promise<Logger> {
  const options = { level: env.LOG_LEVEL ?? 'info', base: undefined, serializers: LOG_SERIALIZERS };
  if (format === 'json') return pino(options);
  const { default: pretty } = await import('pino-pretty');
  // sync: lines are written in order with the banner, and none is lost when the process exits
  return pino(options, pretty({ colorize: process.stdout.isTTY === true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
}

export interface ServerSummary {
  version: string;
  url: string;
  ui: boolean;
  console: boolean;
  agents: Array<{ id: string; model: string }>;
  workflows: string[];
  tools: string[];
  data: string;
  auth: string;
  config: string;
}

/** What the server hosts, read from its modules (each may be absent in a custom assembly). */
export function summarize(server: EventloomServer, extra: Pick<ServerSummary, 'version' | 'data' | 'auth' | 'config'>): ServerSummary {
  const agents = server.modules.get('agents') as AgentsModule | undefined;
  const workflows = server.modules.get('workflows') as WorkflowsModule | undefined;
  const tools = server.modules.get('tools') as ToolsModule | undefined;
  return {
    ...extra,
    url: server.url,
    ui: server.routes.some((r) => r.method === 'GET' && r.path === '/ui'),
    console: server.routes.some((r) => r.method === 'GET' && r.path === '/console'),
    agents: agents?.registry.list().map((a) => ({ id: a.id, model: agents.registry.modelLabel(a) })) ?? [],
    workflows: workflows ? [...workflows.engine.workflows.keys()] : [],
    tools:
      tools
        ?.catalog()
        .executable()
        .map((e) => e.tool.name) ?? [],
  };
}

const list = (items: string[]) => (items.length === 0 ? '(none)' : items.join(', '));

export function renderBanner(s: ServerSummary): string {
  const models = [...new Set(s.agents.map((a) => a.model))];
  const rows: Array<[string, string]> = [
    ['URL', s.url],
    ['Explorer', s.ui ? `${s.url}/ui` : 'off (NODE_ENV=production; set server.enableSwaggerUI to turn it on)'],
    ...(s.console ? ([['Console', `${s.url}/console`]] as Array<[string, string]>) : []),
    ['Agents', list(s.agents.map((a) => a.id))],
    ['Workflows', list(s.workflows)],
    ['Tools', list(s.tools)],
    ['Model', models.length === 0 ? '(no agents)' : models.join(', ')],
    ['Data', s.data],
    ['Auth', s.auth.replace(/^authentication: /, '')],
    ['Config', s.config],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return [`eventloom ${s.version} is running`, ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`), ''].join('\n');
}
