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
  databaseUrl?: string;
  nodeId?: string;
  leaseMs?: number;
}

export const USAGE = 'usage: eventloom start [--port <n>] [--host <addr>] [--data <dir>] [--config <file>] [--default-private] [--database-url <postgres://…>] [--node-id <id>] [--lease-ms <n>]';

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
      case '--help':
      case '-h':
        args.command = 'help';
        break;
      default:
        throw new Error(`unknown option ${a}\n${USAGE}`);
    }
  }
  return args;
}

