/**
 * The `mcpServers` config section: accepted shapes in declaration order, and the boot-time
 * messages for every kind of mistake (each names the server and the field).
 */
import { describe, expect, it } from 'vitest';
import { parseMcpServersConfig } from '../../src/mcp/config.js';

describe('parseMcpServersConfig', () => {
  it('returns no servers when the section is absent', () => {
    expect(parseMcpServersConfig(undefined)).toEqual([]);
    expect(parseMcpServersConfig(null)).toEqual([]);
  });

  it('reads stdio and streamable HTTP servers in declaration order', () => {
    const entries = parseMcpServersConfig({
      files: { command: 'npx', args: ['-y', 'server-files'], env: { ROOT: '/tmp' }, cwd: '/tmp', name: 'Files', version: '1.0.0', description: 'd' },
      'web.search': { url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer x' }, toolPrefix: false, connectTimeoutMs: 500, requestTimeoutMs: 1000 },
    });
    expect(entries).toEqual([
      { id: 'files', transport: 'stdio', config: { command: 'npx', args: ['-y', 'server-files'], env: { ROOT: '/tmp' }, cwd: '/tmp', name: 'Files', version: '1.0.0', description: 'd' } },
      { id: 'web.search', transport: 'http', config: { url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer x' }, toolPrefix: false, connectTimeoutMs: 500, requestTimeoutMs: 1000 } },
    ]);
  });

  it('refuses a section that is not an object keyed by id', () => {
    expect(() => parseMcpServersConfig([{ command: 'x' }])).toThrow('config.mcpServers must be an object keyed by server id');
    expect(() => parseMcpServersConfig('x')).toThrow('config.mcpServers must be an object keyed by server id');
  });

  it('refuses ids that cannot appear in a path', () => {
    expect(() => parseMcpServersConfig({ 'a b': { command: 'x' } })).toThrow("server id 'a b' must be 1-64 characters");
    expect(() => parseMcpServersConfig({ 'a/b': { command: 'x' } })).toThrow("server id 'a/b'");
  });

  it('needs exactly one of command and url', () => {
    expect(() => parseMcpServersConfig({ s: {} })).toThrow("config.mcpServers.s: give either 'command' (a stdio server) or 'url' (a streamable HTTP server)");
    expect(() => parseMcpServersConfig({ s: { command: 'x', url: 'http://h/mcp' } })).toThrow('config.mcpServers.s: give either');
    expect(() => parseMcpServersConfig({ s: 'npx server' })).toThrow('config.mcpServers.s: give either');
  });

  it('names the field of a malformed entry', () => {
    expect(() => parseMcpServersConfig({ s: { command: '' } })).toThrow(/^config\.mcpServers\.s: command: /);
    expect(() => parseMcpServersConfig({ s: { command: 'x', args: 'a b' } })).toThrow(/^config\.mcpServers\.s: args: /);
    expect(() => parseMcpServersConfig({ s: { command: 'x', headers: {} } })).toThrow(/^config\.mcpServers\.s: .*headers/);
    expect(() => parseMcpServersConfig({ s: { url: 'ftp://h/mcp' } })).toThrow(/^config\.mcpServers\.s: url: /);
    expect(() => parseMcpServersConfig({ s: { url: 'not a url' } })).toThrow(/^config\.mcpServers\.s: url: /);
    expect(() => parseMcpServersConfig({ s: { command: 'x', connectTimeoutMs: 0 } })).toThrow(/^config\.mcpServers\.s: connectTimeoutMs: /);
    expect(() => parseMcpServersConfig({ s: { command: 'x', toolPrefix: true } })).toThrow(/^config\.mcpServers\.s: toolPrefix: /);
  });
});
