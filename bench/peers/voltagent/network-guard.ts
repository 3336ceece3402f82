/**
 * Refuses every outbound network connection of the VoltAgent peer server except to loopback
 * (127.0.0.0/8, ::1, localhost) and local sockets, so the benchmark never leaves the machine:
 * `globalThis.fetch` rejects for other hosts, and `net.Socket#connect` (which every TCP and TLS
 * client in Node, undici included, goes through) throws. Refusals are printed to stderr, so a
 * library trying to phone home is visible in the benchmark's log instead of silently slowing it.
 * Must be the first import of the server module: ES modules evaluate imports in order.
 */
import net from 'node:net';

const refused = new Set<string>();

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1' || /^127\./.test(h) || /^::ffff:127\./.test(h);
}

function refuse(target: string): Error {
  if (!refused.has(target)) {
    refused.add(target);
    process.stderr.write(`[network-guard] refused outbound connection to ${target}\n`);
  }
  return new Error(`network guard: outbound connection to ${target} refused (benchmark peer runs offline)`);
}

const originalFetch = globalThis.fetch;
globalThis.fetch = async function guardedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  if (!isLoopbackHost(url.hostname)) throw refuse(url.host);
  return originalFetch(input, init);
};

type ConnectArgs = unknown[];

/** The host a `socket.connect(...)` call targets, or undefined for a local (IPC) socket. */
function connectTarget(args: ConnectArgs): { host: string; port: unknown } | undefined {
  // net.connect() passes its normalised [options, callback] pair as the first argument
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (typeof first === 'string' && !/^\d+$/.test(first)) return undefined; // a socket path
  if (typeof first === 'number' || typeof first === 'string') {
    return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: first };
  }
  if (first !== null && typeof first === 'object') {
    const o = first as { path?: unknown; host?: unknown; port?: unknown };
    if (typeof o.path === 'string') return undefined;
    return { host: typeof o.host === 'string' ? o.host : 'localhost', port: o.port };
  }
  return { host: 'localhost', port: undefined };
}

const originalConnect = net.Socket.prototype.connect as (...args: ConnectArgs) => net.Socket;
(net.Socket.prototype as unknown as { connect: (...args: ConnectArgs) => net.Socket }).connect = function guardedConnect(this: net.Socket, ...args: ConnectArgs): net.Socket {
  const target = connectTarget(args);
  if (target !== undefined && !isLoopbackHost(target.host)) throw refuse(`${target.host}:${String(target.port)}`);
  return originalConnect.apply(this, args);
};
