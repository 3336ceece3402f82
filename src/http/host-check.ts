/**
 * The `Host` check against DNS rebinding. A page on a name the attacker controls can re-point that name at
 * 127.0.0.1 and then call a local server as its own origin: the Origin check of the host-changing routes passes
 * (origin and `Host` agree) and CORS is not involved at all. What gives it away is the `Host` header, which the
 * browser fills with the page's name. So a server bound to a loopback address (the default) answers only requests
 * whose `Host` is a loopback name or address (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`, any port) or a name
 * the operator lists in `server.allowedHosts`; bound elsewhere, it checks only when `allowedHosts` is set.
 * Anything else: 403 `Host not allowed: <host>`.
 *
 * An empty `Host` passes (browsers always send a name; uWS itself closes an HTTP/1.1 request without the
 * header). `X-Forwarded-Host` is not consulted: any page may send it.
 */
import { AppError } from '../errors.js';

export interface HostPolicy {
  /** true when a request with this `Host` header (undefined: none sent) may be answered */
  allows(host: string | undefined): boolean;
}

/**
 * The name part of a `Host` header value, lower-cased, without port, brackets or trailing dot; undefined when the
 * value is not `name[:port]` or `[ipv6][:port]`.
 */
export function hostName(header: string): string | undefined {
  let name: string;
  let rest: string;
  if (header.startsWith('[')) {
    const close = header.indexOf(']');
    if (close < 0) return undefined;
    name = header.slice(1, close);
    rest = header.slice(close + 1);
  } else {
    const colon = header.indexOf(':');
    name = colon < 0 ? header : header.slice(0, colon);
    rest = colon < 0 ? '' : header.slice(colon);
  }
  if (rest !== '' && !/^:\d{0,5}$/.test(rest)) return undefined;
  name = name.toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  return name === '' ? undefined : name;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Whether `name` (as `hostName` returns it) is a loopback name or address. */
export function isLoopbackName(name: string): boolean {
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (name === '::1' || name === '0:0:0:0:0:0:0:1') return true;
  const v4 = IPV4.exec(name);
  return v4 !== null && v4[1] === '127' && v4.slice(2).every((o) => Number(o) <= 255);
}

/** Whether the address the server listens on only takes local connections. */
export function isLoopbackBind(address: string): boolean {
  const name = address.startsWith('[') ? address.slice(1, -1) : address;
  return isLoopbackName(name.toLowerCase());
}

/**
 * Checks `server.allowedHosts`: host names or addresses without scheme, port or path; a leading dot (`.example.com`)
 * admits the name and every name below it. Returns the entries normalised as `hostName` normalises a header.
 */
export function parseAllowedHosts(entries: unknown, label = 'server.allowedHosts'): string[] {
  if (!Array.isArray(entries)) throw new Error(`${label} must be an array of host names, got ${JSON.stringify(entries)}`);
  return entries.map((entry, i) => {
    const bad = () => new Error(`${label}[${i}] must be a host name or address without scheme, port or path (e.g. 'api.example.com', '.example.com', '10.0.0.5'), got ${JSON.stringify(entry)}`);
    if (typeof entry !== 'string') throw bad();
    const wildcard = entry.startsWith('.');
    const bare = wildcard ? entry.slice(1) : entry;
    let name: string | undefined;
    if (/^\[[0-9a-fA-F:.]+\]$/.test(bare)) name = bare.slice(1, -1).toLowerCase();
    else if (/^[0-9a-fA-F:.]+$/.test(bare) && bare.split(':').length > 2) name = bare.toLowerCase();
    // a port would be ignored (the check is about names): refused, so nobody thinks it narrows the rule
    else if (/^[A-Za-z0-9_.-]+$/.test(bare)) name = hostName(bare);
    if (name === undefined) throw bad();
    return wildcard ? `.${name}` : name;
  });
}

/**
 * `server.allowedHosts` and the CLI's `--allowed-hosts` together (each adds names), checked; undefined when neither
 * is set. Called before the server opens its log, so a bad entry stops the start with nothing to undo.
 */
export function allowedHostsOf(fromConfig: unknown, fromCli: readonly string[] | undefined): string[] | undefined {
  if (fromConfig === undefined && fromCli === undefined) return undefined;
  return [...(fromConfig === undefined ? [] : parseAllowedHosts(fromConfig)), ...(fromCli === undefined ? [] : parseAllowedHosts(fromCli, '--allowed-hosts'))];
}

/**
 * The policy for a server listening on `bindAddress`; undefined when nothing is checked (bound to a non-loopback
 * address without `allowedHosts`).
 */
export function createHostPolicy(bindAddress: string, allowedHosts: readonly string[] | undefined): HostPolicy | undefined {
  if (allowedHosts === undefined && !isLoopbackBind(bindAddress)) return undefined;
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const entry of allowedHosts ?? []) {
    if (entry.startsWith('.')) {
      suffixes.push(entry);
      exact.add(entry.slice(1));
    } else exact.add(entry);
  }
  // nearly every request of a connection, and of a server, carries the same Host: remember the last one allowed
  let lastAllowed: string | undefined;
  return {
    allows(host) {
      if (host === undefined || host === '' || host === lastAllowed) return true;
      const name = hostName(host);
      if (name === undefined) return false;
      const ok = isLoopbackName(name) || exact.has(name) || suffixes.some((s) => name.endsWith(s));
      if (ok) lastAllowed = host;
      return ok;
    },
  };
}

export const hostNotAllowed = (host: string): AppError => new AppError('HOST_NOT_ALLOWED', `Host not allowed: ${host}`);
