/**
 * Command-line arguments of `eventloom`: parsed strictly, so a typo is an error rather than a
 * silently ignored flag.
 */
export interface CliArgs {
  command: string;
  port?: number;
  host?: string;
  data?: string;
  config?: string;
  defaultPrivate?: boolean;
  /** `pretty` (the default on a TTY) or `json` (the default otherwise) */
  logFormat?: 'json' | 'pretty';
  /** one log line per answered request */
  accessLog?: boolean;
  /** positional arguments after the command (`init [dir]`) */
  positionals?: string[];
  /** the PostgreSQL store shared by several nodes */
  databaseUrl?: string;
  nodeId?: string;
  leaseMs?: number;
  /** `Host` names answered besides the loopback ones (src/http/host-check.ts) */
  allowedHosts?: string[];
}

export const USAGE = `usage: eventloom start [--port <n>] [--host <addr>] [--data <dir>] [--config <file>] [--default-private]
                       [--log-format pretty|json] [--access-log] [--allowed-hosts <name,...>]
                       [--database-url <postgres://…>] [--node-id <id>] [--lease-ms <n>]
       eventloom dev [start options]   start, restarted whenever the config or a file it imports changes
       eventloom init [dir]   write eventloom.config.ts, tsconfig.json and package.json scripts (never overwrites)`;

export function parseArgs(argv: string[]): CliArgs {
  const args: CliArgs = { command: 'start' };
  let i = 0;
  if (argv[0] && !argv[0].startsWith('-')) args.command = argv[i++];
  for (; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value\n${USAGE}`);
      return v;
    };
    switch (flag) {
      case '--port': {
        const v = value();
        const n = Number(v);
        if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--port must be an integer from 0 to 65535, got '${v}'`);
        args.port = n;
        break;
      }
      case '--host':
        args.host = value();
        break;
      case '--data':
        args.data = value();
        break;
      case '--config':
        args.config = value();
        break;
      case '--database-url':
        args.databaseUrl = value();
        break;
      case '--node-id':
        args.nodeId = value();
        break;
      case '--lease-ms': {
        const v = value();
        args.leaseMs = Number(v);
        if (!Number.isInteger(args.leaseMs)) throw new Error(`--lease-ms must be an integer (ms), got '${v}'`);
        break;
      }
      case '--default-private':
        args.defaultPrivate = true;
        break;
      case '--log-format': {
        const v = value();
        if (v !== 'json' && v !== 'pretty') throw new Error(`--log-format must be 'pretty' or 'json', got '${v}'`);
        args.logFormat = v;
        break;
      }
      case '--allowed-hosts':
        // repeated flags add up, as the names add to server.allowedHosts
        (args.allowedHosts ??= []).push(
          ...value()
            .split(',')
            .map((h) => h.trim())
            .filter((h) => h !== ''),
        );
        break;
      case '--access-log':
        args.accessLog = true;
        break;
      case '--help':
      case '-h':
        args.command = 'help';
        break;
      default:
        if (!a.startsWith('-') && args.command === 'init') {
          (args.positionals ??= []).push(a);
          break;
        }
        throw new Error(`unknown option ${a}\n${USAGE}`);
    }
  }
  return args;
}
