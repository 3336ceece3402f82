/**
 * What `eventloom start` prints: a banner and readable log lines for a person (`pretty`, the default
 * on a terminal), JSON lines for machines (the default when stdout is a pipe), and an access log line
 * per request with `--access-log`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chooseLogFormat } from '../../src/cli/banner.js';
import { parseArgs } from '../../src/cli/args.js';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const dirs: string[] = [];
const children: SpawnedServer[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'eventloom-out-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const c of children.splice(0)) c.child.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
};

describe('start-up output', () => {
  it('is readable on a terminal and JSON otherwise, unless --log-format says which', () => {
    expect(chooseLogFormat(undefined, true)).toBe('pretty');
    expect(chooseLogFormat(undefined, false)).toBe('json');
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('pretty', false)).toBe('pretty');
    expect(parseArgs(['start', '--log-format', 'json', '--access-log'])).toMatchObject({ logFormat: 'json', accessLog: true });
    expect(() => parseArgs(['--log-format', 'xml'])).toThrow(/--log-format must be 'pretty' or 'json'/);
  });

  it('prints a banner with what the server hosts, then readable log lines and access lines', async () => {
    const data = tmp();
    const s = await spawnServer(['--port', '0', '--data', data, '--log-format', 'pretty', '--access-log']);
    children.push(s);
    const out = s.output();
    expect(out).toContain('eventloom 0.1.0 is running');
    expect(out).toMatch(new RegExp(`URL +${s.url.replace(/\./g, '\\.')}\\n`));
    expect(out).toMatch(/Explorer +http:\/\/127\.0\.0\.1:\d+\/ui/);
    expect(out).toMatch(/Console +http:\/\/127\.0\.0\.1:\d+\/console\n/);
    expect(out).toMatch(/Agents +assistant\n/);
    expect(out).toMatch(/Workflows +echo, order-approval, weather-brief, checkout, payment-reminder\n/);
    expect(out).toMatch(/Tools +getWeather, issueRefund\n/);
    expect(out).toMatch(/Model +demo \(offline\)\n/);
    expect(out).toContain(`Data       ${data}`);
    expect(out).toMatch(/Auth +none \(all routes public\)\n/);
    // the config a person edits, not a transpiled copy
    expect(out).toContain(`Config     ${path.join(ROOT, 'examples', 'eventloom.config.ts')} (bundled example)`);
    expect(out).toMatch(/INFO.*: eventloom listening on http/);
    expect(out).not.toMatch(/^\{"level"/m);
    await fetch(`${s.url}/agents`);
    await until(() => /GET \/agents 200 [\d.]+ ms/.test(s.output()));
    expect(s.output()).toMatch(/GET \/agents 200 [\d.]+ ms/);
  });

  it('writes JSON lines without a banner when stdout is not a terminal, and no access lines by default', async () => {
    const s = await spawnServer(['--port', '0', '--data', tmp()]);
    children.push(s);
    const lines = s.output().trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(s.output()).not.toContain('is running');
    await fetch(`${s.url}/agents`);
    // long enough for a line written at the answer to cross the pipe (the pretty test sees it within this)
    await new Promise((r) => setTimeout(r, 300));
    expect(s.output()).not.toContain('GET /agents');
  });
});
