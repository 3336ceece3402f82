/**
 * System routes end to end: POST /setup-observability writes the keys into the configured .env; GET /updates
 * compares the project's packages with a local registry (the one npm is configured with unless the config names
 * one; one that does not answer costs a bounded wait and yields a reason per package); POST /updates and
 * POST /updates/:packageName run the injected npm; in production the host-changing routes need the console key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { fakeProject, startFakeRegistry, startLocalServer, type FakeProject, type LocalServer } from '../observability/helpers.js';

const SETUP_MESSAGE = 'Observability configured successfully. Please restart your application.';

describe('system routes', () => {
  let t: TestServer;
  let registry: LocalServer;
  let project: FakeProject;
  let envFile: string;
  beforeAll(async () => {
    registry = await startFakeRegistry({ pino: '10.9.0', zod: '4.6.7', '@scope/kit': '1.0.1', typescript: '6.0.0' });
    project = fakeProject({
      deps: { pino: '^10.4.0', zod: '^4.6.7', '@scope/kit': '^1.0.0' },
      devDeps: { typescript: '^5.9.0' },
      installed: { pino: '10.4.0', zod: '4.6.7', '@scope/kit': '1.0.0', typescript: '5.9.3' },
    });
    envFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'eventloom-env-')), '.env');
    t = await startTestServer({ observability: { envFile, updates: { packageJson: project.packageJson, registryUrl: registry.url, npmCommand: project.npm } } });
  });
  afterAll(async () => {
    await t.close();
    await registry.close();
  });

  it('writes the keys into .env, updating existing lines and keeping the others', async () => {
    writeFileSync(envFile, 'PORT=1\nSERVICE_PUBLIC_KEY=old\n');
    const r = await api(`${t.url}/setup-observability`, { method: 'POST', json: { publicKey: 'pk-1', secretKey: 'sk 2' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { message: SETUP_MESSAGE }, message: SETUP_MESSAGE });
    expect(readFileSync(envFile, 'utf8')).toBe('PORT=1\nSERVICE_PUBLIC_KEY=pk-1\nSERVICE_SECRET_KEY="sk 2"\n');
  });

  it('answers 400 when a key is missing or not a string', async () => {
    for (const json of [{}, { publicKey: 'a' }, { secretKey: 'b' }, { publicKey: 'a', secretKey: 5 }, { publicKey: '', secretKey: 'b' }]) {
      expect(await api(`${t.url}/setup-observability`, { method: 'POST', json })).toMatchObject({ status: 400, body: { success: false, error: 'Missing publicKey or secretKey' } });
    }
  });

  it('answers 500 when the .env file cannot be written', async () => {
    const bad = await startTestServer({ observability: { envFile: '/nonexistent-dir-eventloom/.env' } });
    try {
      expect(await api(`${bad.url}/setup-observability`, { method: 'POST', json: { publicKey: 'a', secretKey: 'b' } })).toMatchObject({
        status: 500,
        body: { success: false, error: 'Failed to update .env file' },
      });
    } finally {
      await bad.close();
    }
  });

  it('lists updates of the project packages', async () => {
    const r = await api(`${t.url}/updates`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      hasUpdates: true,
      updates: [
        { name: 'pino', installed: '10.4.0', latest: '10.9.0', type: 'minor', packageJson: 'dependencies' },
        { name: 'zod', installed: '4.6.7', latest: '4.6.7', type: 'latest', packageJson: 'dependencies' },
        { name: '@scope/kit', installed: '1.0.0', latest: '1.0.1', type: 'patch', packageJson: 'dependencies' },
        { name: 'typescript', installed: '5.9.3', latest: '6.0.0', type: 'major', packageJson: 'devDependencies' },
      ],
      count: 3,
      message: 'Found 3 outdated packages',
      registry: `${registry.url}/`,
    });
  });

  it('installs one package by path or body name and every outdated package without a name', async () => {
    const before = project.calls().length;
    expect((await api(`${t.url}/updates/pino`, { method: 'POST' })).body).toEqual({ success: true, data: { message: 'Updates installed successfully' } });
    expect((await api(`${t.url}/updates/${encodeURIComponent('@scope/kit')}`, { method: 'POST' })).status).toBe(200);
    expect((await api(`${t.url}/updates`, { method: 'POST', json: { packageName: 'typescript' } })).status).toBe(200);
    expect((await api(`${t.url}/updates`, { method: 'POST' })).status).toBe(200);
    expect(project.calls().slice(before)).toEqual([
      ['install', 'pino@latest'],
      ['install', '@scope/kit@latest'],
      ['install', '--save-dev', 'typescript@latest'],
      ['install', 'pino@latest', '@scope/kit@latest'],
      ['install', '--save-dev', 'typescript@latest'],
    ]);
  });

  it('answers 400 for a name that is not valid or not one of the packages, without running npm', async () => {
    const before = project.calls().length;
    expect((await api(`${t.url}/updates/left-pad`, { method: 'POST' })).body).toEqual({ success: false, error: 'Invalid package name: left-pad' });
    expect((await api(`${t.url}/updates/${encodeURIComponent('pino; rm -rf /')}`, { method: 'POST' })).body).toEqual({ success: false, error: 'Invalid package name: pino; rm -rf /' });
    expect((await api(`${t.url}/updates`, { method: 'POST', json: { packageName: '--global' } })).body).toEqual({ success: false, error: 'Invalid package name: --global' });
    expect((await api(`${t.url}/updates`, { method: 'POST', json: { packageName: 42 } })).status).toBe(400);
    expect(project.calls().length).toBe(before);
  });

  it('answers 400 for an invalid name before reading package.json or running anything', async () => {
    const s = await startTestServer({ observability: { updates: { packageJson: '/nonexistent-dir-eventloom/package.json', registryUrl: registry.url, npmCommand: project.npm } } });
    const before = project.calls().length;
    try {
      expect(await api(`${s.url}/updates/INVALID%20NAME!`, { method: 'POST' })).toMatchObject({ status: 400, body: { success: false, error: 'Invalid package name: INVALID NAME!' } });
      expect(await api(`${s.url}/updates`, { method: 'POST', json: { packageName: '--global' } })).toMatchObject({ status: 400, body: { error: 'Invalid package name: --global' } });
      expect(project.calls().length).toBe(before);
    } finally {
      await s.close();
    }
  });

  it('answers 500 when npm fails', async () => {
    const failing = fakeProject({ deps: { pino: '^10.0.0' }, installed: { pino: '10.0.0' }, exitCode: 2 });
    const s = await startTestServer({ observability: { updates: { packageJson: failing.packageJson, registryUrl: registry.url, npmCommand: failing.npm } } });
    try {
      expect(await api(`${s.url}/updates/pino`, { method: 'POST' })).toMatchObject({ status: 500, body: { success: false, error: 'Failed to install updates' } });
      expect(failing.calls()).toEqual([['install', 'pino@latest']]);
    } finally {
      await s.close();
    }
  });

  it('answers promptly with the installed versions and the reason when the registry does not answer, and installs nothing', async () => {
    const silent = await startLocalServer(() => undefined);
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const s = await startTestServer({ observability: { updates: { packageJson: project.packageJson, registryUrl: silent.url, timeoutMs: 500, npmCommand: project.npm } } }, { logger });
    const before = project.calls().length;
    try {
      const started = Date.now();
      const r = await api(`${s.url}/updates`);
      expect(Date.now() - started).toBeLessThan(3000);
      const reason = `no answer from ${silent.url}/ within 500 ms`;
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual({
        hasUpdates: false,
        updates: [
          { name: 'pino', installed: '10.4.0', latest: null, type: 'unknown', packageJson: 'dependencies', reason },
          { name: 'zod', installed: '4.6.7', latest: null, type: 'unknown', packageJson: 'dependencies', reason },
          { name: '@scope/kit', installed: '1.0.0', latest: null, type: 'unknown', packageJson: 'dependencies', reason },
          { name: 'typescript', installed: '5.9.3', latest: null, type: 'unknown', packageJson: 'devDependencies', reason },
        ],
        count: 0,
        message: `Could not check for updates: ${reason}`,
        registry: `${silent.url}/`,
      });
      expect(await api(`${s.url}/updates`, { method: 'POST' })).toMatchObject({ status: 500, body: { success: false, error: 'Failed to install updates' } });
      expect(project.calls().length).toBe(before);
      // one warning per check naming the registry and the reasons, no error object dumped
      const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.component === 'system' && l.level === 40);
      expect(warnings.map((w) => w.msg)).toEqual(['update check incomplete', 'update check before install incomplete']);
      expect(warnings[0]).toMatchObject({ registry: `${silent.url}/`, unknown: expect.arrayContaining([{ name: 'pino', reason }]) });
      expect(lines.join('')).not.toContain('INDEX_SIZE_ERR');
    } finally {
      await s.close();
      await silent.close();
    }
  });

  it('asks the registry npm is configured with when none is set in the config', async () => {
    const h = mkdtempSync(path.join(os.tmpdir(), 'eventloom-home-'));
    const s = await startTestServer(
      { observability: { updates: { packageJson: project.packageJson, npmCommand: project.npm } } },
      { env: { HOME: h, NODE_ENV: 'test', npm_config_registry: registry.url } },
    );
    try {
      const r = await api(`${s.url}/updates`);
      expect(r.body.data).toMatchObject({ registry: `${registry.url}/`, count: 3, message: 'Found 3 outdated packages' });
    } finally {
      await s.close();
    }
  });
});

describe('host-changing routes in production', () => {
  let t: TestServer;
  let project: FakeProject;
  let registry: LocalServer;
  let envFile: string;
  beforeAll(async () => {
    registry = await startFakeRegistry({ pino: '10.4.0' });
    project = fakeProject({ deps: { pino: '^10.4.0' }, installed: { pino: '10.4.0' } });
    envFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'eventloom-env-')), '.env');
    t = await startTestServer(
      { observability: { envFile, updates: { packageJson: project.packageJson, registryUrl: registry.url, npmCommand: project.npm } } },
      { env: { ...process.env, NODE_ENV: 'production', SERVICE_CONSOLE_ACCESS_KEY: 'prod-key' } },
    );
  });
  afterAll(async () => {
    await t.close();
    await registry.close();
  });

  it('refuses anonymous clients with 401 and accepts the console key', async () => {
    const denied = { status: 401, body: { success: false, error: 'Console access required' } };
    expect(await api(`${t.url}/setup-observability`, { method: 'POST', json: { publicKey: 'a', secretKey: 'b' } })).toMatchObject(denied);
    expect(await api(`${t.url}/setup-observability`, { method: 'POST', headers: { 'x-service-dev': 'true' }, json: { publicKey: 'a', secretKey: 'b' } })).toMatchObject(denied);
    expect(await api(`${t.url}/updates/pino`, { method: 'POST' })).toMatchObject(denied);
    expect(await api(`${t.url}/updates`, { method: 'POST' })).toMatchObject(denied);
    expect(project.calls()).toEqual([]);
    const key = { 'x-console-access-key': 'prod-key' };
    expect((await api(`${t.url}/setup-observability`, { method: 'POST', headers: key, json: { publicKey: 'a', secretKey: 'b' } })).status).toBe(200);
    expect(readFileSync(envFile, 'utf8')).toBe('SERVICE_PUBLIC_KEY=a\nSERVICE_SECRET_KEY=b\n');
    expect((await api(`${t.url}/updates/pino`, { method: 'POST', headers: key })).status).toBe(200);
    expect(project.calls()).toEqual([['install', 'pino@latest']]);
    // reading is not host-changing
    expect((await api(`${t.url}/updates`)).status).toBe(200);
    expect((await api(`${t.url}/api/logs`)).status).toBe(200);
  });
});
