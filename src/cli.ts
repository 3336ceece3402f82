/**
 * `eventloom start [--port n] [--host addr] [--data dir] [--config file] [--default-private]`.
 * Defaults: port 3141, host 127.0.0.1, data ./.eventloom, config ./eventloom.config.ts when present,
 * else the bundled examples. Exit code 1 with a clear message when the server cannot start
 * (busy port, locked data directory, bad config).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, USAGE } from './cli-args.js';

// uWS reads its header limit when the addon loads: set it before anything imports uWebSockets.js
process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= '16384';

function defaultConfigFile(): string {
  const local = path.resolve('eventloom.config.ts');
  if (existsSync(local)) return local;
  // the bundled examples sit beside this module's tree: examples/*.ts under tsx, dist/examples/*.js when transpiled
  const ext = import.meta.url.endsWith('.js') ? 'js' : 'ts';
  return path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'examples', `eventloom.config.${ext}`);
}

async function main(): Promise<void> {
  const tools = await import('./cli/tools.js');
  if (tools.isToolCommand(process.argv[2])) {
    process.exitCode = await tools.runTool(process.argv[2], process.argv.slice(3), { defaultConfigFile });
    return;
  }
  const args = parseArgs(process.argv.slice(2));
  if (args.command === 'help') {
    console.log(`${USAGE}\n${tools.TOOLS_USAGE}`);
    return;
  }
  if (args.command !== 'start') throw new Error(`unknown command '${args.command}'\n${USAGE}`);
  const { loadConfig } = await import('./config/define-config.js');
  const { startDefaultServer } = await import('./server-assembly.js');
  const configFile = args.config ?? defaultConfigFile();
  const config = await loadConfig(configFile);
  const server = await startDefaultServer({
    config,
    port: args.port,
    host: args.host,
    dataDir: args.data,
    defaultPrivate: args.defaultPrivate,
  });
  server.logger.info({ url: server.url, config: configFile, data: path.resolve(args.data ?? config.server?.dataDir ?? '.eventloom') }, `eventloom listening on ${server.url}`);
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
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: Error) => {
  console.error(`eventloom: ${err.message}`);
  process.exit(1);
});
