/**
 * The offline tools of the `eventloom` command: `export`, `import`, `replay`, `repair`, `rebuild`, `retention`. None starts a server.
 * Exit codes: 0 success, 1 a failure or (replay) a divergence, 2 a usage error.
 */
import { CliError } from './cli-error.js';
import type { ToolEnv } from './tool-env.js';

interface Command {
  run(argv: string[], env: ToolEnv): Promise<number>;
  usage: string;
}

// loaded on demand: `eventloom start` never pays for the tools
const COMMANDS: Record<string, () => Promise<Command>> = {
  export: async () => {
    const m = await import('./export.js');
    return { run: m.exportCommand, usage: m.EXPORT_USAGE };
  },
  import: async () => {
    const m = await import('./import.js');
    return { run: m.importCommand, usage: m.IMPORT_USAGE };
  },
  replay: async () => {
    const m = await import('./replay.js');
    return { run: m.replayCommand, usage: m.REPLAY_USAGE };
  },
  repair: async () => {
    const m = await import('./repair.js');
    return { run: m.repairCommand, usage: m.REPAIR_USAGE };
  },
  rebuild: async () => {
    const m = await import('./rebuild.js');
    return { run: m.rebuildCommand, usage: m.REBUILD_USAGE };
  },
  retention: async () => {
    const m = await import('./retention.js');
    return { run: m.retentionCommand, usage: m.RETENTION_USAGE };
  },
};

export const TOOLS_USAGE = `       eventloom export  (--data <dir>) [--out <file>] [--execution <id> | --run <id> | --workflow <id> --status <s> --since <iso>]
       eventloom import  <file.jsonl>... --data <dir>
       eventloom replay  (--data <dir> | <file.jsonl>...) [--config <file>] [--execution <id>] [--workflow <id>] [--live] [--json]
       eventloom repair  --data <dir> [--json]
       eventloom rebuild --data <dir>
       eventloom retention --data <dir> [--config <file>] [--dry-run]
       eventloom <tool> --help for details`;

export const isToolCommand = (name: string | undefined): name is string => name !== undefined && Object.hasOwn(COMMANDS, name);

/** Runs a tool and returns its exit code; user errors are printed as one message. */
export async function runTool(name: string, argv: string[], env: ToolEnv): Promise<number> {
  const command = await COMMANDS[name]();
  // a reader that stops early (`| head`) closes the pipe: the tool finishes (and cleans up) without printing more
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
  });
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      console.log(command.usage);
      return 0;
    }
    return await command.run(argv, env);
  } catch (err) {
    const e = err as Error & { code?: string };
    // node:util parseArgs errors (unknown option, missing value) are usage errors too
    if (err instanceof CliError || e.code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`eventloom ${name}: ${e.message}`);
      return err instanceof CliError ? err.exitCode : 2;
    }
    throw err;
  }
}
