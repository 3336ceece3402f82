/**
 * `/ui` in a real headless Chromium: the explorer loads from the local package (no CDN) and shows
 * the operations of the route table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { chromium, type Browser } from 'playwright-core';
import { startServer, type EventloomServer } from '../../src/main.js';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { CHROMIUM_ARGS, ensureChromium } from '../helpers/chromium.js';

let server: EventloomServer;
let browser: Browser;
let dataDir: string;

beforeAll(async () => {
  const executablePath = ensureChromium();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-ui-'));
  server = await startServer({
    dataDir,
    port: 0,
    log: createMemoryLog(),
    logger: pino({ level: 'silent' }),
    env: { NODE_ENV: 'test' },
    config: { routes: [{ method: 'GET', path: '/greeting', summary: 'A custom greeting', handler: () => 'hi' }] },
  });
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('the API explorer', () => {
  it('renders every operation of the OpenAPI document without any outside request', async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(server.url)) outside.push(req.url());
    });
    await page.goto(`${server.url}/ui`);
    await page.waitForSelector('.opblock', { timeout: 20_000 });
    const text = await page.locator('#swagger-ui').innerText();
    expect(text).toContain('Agent and Workflow Server API');
    expect(text).toContain('/greeting');
    expect(text).toContain('/doc');
    expect(await page.locator('.opblock').count()).toBeGreaterThanOrEqual(3);
    expect(outside.filter((u) => !u.startsWith('data:'))).toEqual([]);
    await page.close();
  });
});
