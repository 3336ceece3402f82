/**
 * `eventloom <command>`: `start` (the default) runs the server; `init [dir]` scaffolds a project;
 * `export`, `import`, `replay`, `repair` and `rebuild` are the offline tools of src/cli/tools.ts. Each command is one
 * entry of COMMANDS (or of the tools' table) and parses its own arguments.
 *
 * `eventloom start [--port n] [--host addr] [--data dir] [--config file] [--default-private]
 * [--log-format pretty|json] [--access-log] [--database-url postgres://…] [--node-id id]
 * [--lease-ms n]`. Defaults: port 3141, host 127.0.0.1, data ./.eventloom,
 * config ./eventloom.config.ts (or .mts) when present, else the bundled examples; readable logs after a
 * banner on a terminal, JSON lines otherwise. Exit code 1 with a clear message when the server
 * cannot start (busy port, locked data directory, unreachable database, bad config).
 *
 * `eventloom dev [start flags]` runs `start` and restarts it when the config changes (src/cli/dev.ts).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { capYoungGeneration } from '../runtime/young-generation-cap.js';
import { parseArgs, USAGE, type CliArgs } from './args.js';

// before start-up grows the young generation (src/runtime/young-generation-cap.ts); EVENTLOOM_IDLE_GC=0 turns it off with the idle collection
if (process.env.EVENTLOOM_IDLE_GC !== '0') capYoungGeneration();

// uWS reads its header limit when the addon loads: set it before anything imports uWebSockets.js
process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= '16384';

const BUNDLED_EXAMPLE = 'bundled example';

function defaultConfigFile(): { file: string; shown: string } {
  // .mts: the name a CommonJS project gives an ES module config (eventloom init writes it there)
  for (const name of ['eventloom.config.ts', 'eventloom.config.mts']) {
    const local = path.resolve(name);
    if (existsSync(local)) return { file: local, shown: local };
  }
  // the bundled examples sit beside this module's tree: examples/*.ts under tsx, dist/examples/*.js when transpiled
  const here = path.dirname(fileURLToPath(import.meta.url));
  const ext = import.meta.url.endsWith('.js') ? 'js' : 'ts';
  const file = path.join(here, '../..', 'examples', `eventloom.config.${ext}`);
  // a person reads the TypeScript source, which the package ships next to dist/
  const source = path.resolve(here, ext === 'js' ? '../../..' : '../..', 'examples', 'eventloom.config.ts');
  return { file, shown: `${existsSync(source) ? source : file} (${BUNDLED_EXAMPLE})` };
}

/**
 * Start-up waits on promises (a projection catching up, a module starting); one that can never
 * settle leaves Node with nothing to do, and it would exit 0 without ever listening. The event
 * loop emptying before the server listens is therefore a failed start.
 */
function exitIfStartStalls(): () => void {
  const stalled = () => {
    console.error('eventloom: start-up stopped before the server listened (a start-up step waited for something that can no longer happen; see the warnings above)');
    process.exit(1);
  };
  process.once('beforeExit', stalled);
  return () => process.off('beforeExit', stalled);
}

async function start(args: CliArgs): Promise<void> {
  const listening = exitIfStartStalls();
  const { loadConfig } = await import('../config/define-config.js');
  const { startDefaultServer } = await import('../server-assembly.js');
  const { chooseLogFormat, createCliLogger, renderBanner, summarize } = await import('./banner.js');
  const { VERSION } = await import('../version.js');
  const { file: configFile, shown: configShown } = args.config ? { file: args.config, shown: path.resolve(args.config) } : defaultConfigFile();
  const format = chooseLogFormat(args.logFormat, process.stdout.isTTY === true);
  const logger = await createCliLogger(format, process.env);
  const bundled = configShown.endsWith(`(${BUNDLED_EXAMPLE})`) ? (await import('../config/bundled-example.js')).bundledExampleWarning(process.cwd()) : undefined;
  if (bundled) logger.warn({ config: configShown }, bundled);
  const config = await loadConfig(configFile);
  const server = await startDefaultServer({
    config,
    port: args.port,
    host: args.host,
    dataDir: args.data,
    defaultPrivate: args.defaultPrivate,
    databaseUrl: args.databaseUrl,
    nodeId: args.nodeId,
    leaseMs: args.leaseMs,
    accessLog: args.accessLog,
    allowedHosts: args.allowedHosts,
    logger,
  });
  const data = path.resolve(args.data ?? config.server?.dataDir ?? '.eventloom');
  if (format === 'pretty') process.stdout.write(`\n${renderBanner(summarize(server, { version: VERSION, data, auth: server.auth, config: configShown }))}\n`);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.logger.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  // before the line that says it listens: a signal sent on reading it must find the handler in place
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  server.logger.info({ url: server.url, config: configShown, data }, `eventloom listening on ${server.url}`);
  listening();
}

/** The commands; one that takes the server flags parses them with parseArgs. */
const COMMANDS: Record<string, (args: CliArgs) => Promise<void>> = {
  start,
  dev: async (args) => {
    const { runDev } = await import('./dev.js');
    const { chooseLogFormat, createCliLogger } = await import('./banner.js');
    const logger = await createCliLogger(chooseLogFormat(args.logFormat, process.stdout.isTTY === true), process.env);
    await runDev({ configFile: args.config ?? defaultConfigFile().file, startArgs: process.argv.slice(3), logger: logger.child({ component: 'dev' }) });
  },
  init: async (args) => (await import('./init.js')).runInit(args.positionals?.[0] ?? '.', process.cwd()),
  help: async () => console.log(`${USAGE}\n${(await import('./tools.js')).TOOLS_USAGE}`),
};

async function main(): Promise<void> {
  // the offline tools (export, import, replay, repair) parse their own arguments and set the exit code
  const tools = await import('./tools.js');
  if (tools.isToolCommand(process.argv[2])) {
    process.exitCode = await tools.runTool(process.argv[2], process.argv.slice(3), { defaultConfigFile: () => defaultConfigFile().file });
    return;
  }
  const args = parseArgs(process.argv.slice(2));
  const command = Object.hasOwn(COMMANDS, args.command) ? COMMANDS[args.command] : undefined;
  if (!command) throw new Error(`unknown command '${args.command}'\n${USAGE}`);
  await command(args);
}

main().catch((err: Error) => {
  console.error(`eventloom: ${err.message}`);
  process.exit(1);
});
