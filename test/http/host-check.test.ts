/**
 * The pieces of the Host check (src/http/host-check.ts): reading a `Host` value, what counts as loopback, which
 * bind addresses turn the check on, and how `allowedHosts` entries match. The end-to-end behaviour is in
 * test/e2e/host-check.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { allowedHostsOf, createHostPolicy, hostName, isLoopbackBind, isLoopbackName, parseAllowedHosts } from '../../src/http/host-check.js';

describe('the Host check', () => {
  it('reads the name of a Host value without port, brackets, case or trailing dot, and nothing from a malformed one', () => {
    expect(['a.example', 'A.Example:80', 'a.example.', '[::1]:3141', '[::1]', '127.0.0.1:0'].map(hostName)).toEqual(['a.example', 'a.example', 'a.example', '::1', '::1', '127.0.0.1']);
    expect(['', ':80', 'a:b', 'a:80:80', '[::1', '[::1]x', 'a:123456'].map(hostName)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined, undefined]);
  });

  it('counts localhost, *.localhost, 127.0.0.0/8 and ::1 as loopback, and nothing that merely starts like them', () => {
    for (const n of ['localhost', 'app.localhost', '127.0.0.1', '127.255.255.255', '::1']) expect({ n, loop: isLoopbackName(n) }).toEqual({ n, loop: true });
    for (const n of ['localhost.evil.example', 'evillocalhost', '127.256.0.1', '127.0.0.1.evil.example', '128.0.0.1', '0.0.0.0', '::', '::2', '1127.0.0.1']) {
      expect({ n, loop: isLoopbackName(n) }).toEqual({ n, loop: false });
    }
  });

  it('is on for loopback binds, and for other binds only with allowedHosts', () => {
    expect(['127.0.0.1', '127.0.0.2', 'localhost', '::1', '[::1]'].map(isLoopbackBind)).toEqual([true, true, true, true, true]);
    expect(['0.0.0.0', '::', '192.168.1.4'].map(isLoopbackBind)).toEqual([false, false, false]);
    expect(createHostPolicy('0.0.0.0', undefined)).toBeUndefined();
    const listed = createHostPolicy('0.0.0.0', ['api.example'])!;
    expect(['api.example', 'localhost:1', 'other.example'].map((h) => listed.allows(h))).toEqual([true, true, false]);
  });

  it('matches allowedHosts entries exactly, or a name and its subdomains for a leading dot', () => {
    const p = createHostPolicy('127.0.0.1', parseAllowedHosts(['Api.Example.com.', '.corp.example', '10.0.0.5', '[fd00::5]', 'fd00::6']))!;
    for (const h of ['api.example.com:8080', 'corp.example', 'x.y.corp.example', '10.0.0.5:3141', '[fd00::5]:1', '[FD00::6]']) expect({ h, ok: p.allows(h) }).toEqual({ h, ok: true });
    for (const h of ['example.com', 'xcorp.example', 'corp.example.evil', '10.0.0.50', '[fd00::7]']) expect({ h, ok: p.allows(h) }).toEqual({ h, ok: false });
  });

  it('adds the command line names to the config ones, and names the bad entry of either', () => {
    expect(allowedHostsOf(undefined, undefined)).toBeUndefined();
    expect(allowedHostsOf(['a.example'], ['B.example'])).toEqual(['a.example', 'b.example']);
    expect(() => allowedHostsOf(undefined, ['ok.example', 'bad.example:80'])).toThrow(
      "--allowed-hosts[1] must be a host name or address without scheme, port or path (e.g. 'api.example.com', '.example.com', '10.0.0.5'), got \"bad.example:80\"",
    );
    expect(() => parseAllowedHosts(['a b'])).toThrow('server.allowedHosts[0] must be a host name');
    expect(() => parseAllowedHosts(['.'])).toThrow('server.allowedHosts[0] must be a host name');
  });
});
