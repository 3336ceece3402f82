/**
 * Regenerates the console screenshots in docs/screenshots/ (runs list, run view, replay diff): starts the example
 * server in a temp dir, makes a few runs through the API, and photographs the console in headless Chromium.
 * Run with `npx tsx scripts/console-screenshots.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { chromium } from 'playwright-core';
import config from '../examples/eventloom.config.js';
import { startDefaultServer } from '../src/server-assembly.js';
import { CHROMIUM_ARGS, ensureChromium } from '../test/helpers/chromium.js';
import { buildConsole } from './build-console.mjs';

const out = path.resolve('docs/screenshots');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'eventloom-shots-'));
await buildConsole();
const server = await startDefaultServer({ config: { ...config, server: {} }, port: 0, host: '127.0.0.1', dataDir, env: { NODE_ENV: 'development' }, logger: pino({ level: 'silent' }) });
const post = async (p: string, body: unknown) =>
  (await (await fetch(`${server.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as any;

const order = {
  items: [
    { price: 70, qty: 2 },
    { price: 15, qty: 1 },
  ],
};
const approved = (await post('/workflows/order-approval/execute', { input: order, options: { metadata: { team: 'sales' } } })).data.executionId;
await post(`/workflows/order-approval/executions/${approved}/resume`, { resumeData: { approved: true } });
await post('/workflows/order-approval/execute', { input: { items: [{ price: 500, qty: 3 }] } });
for (const text of ['hello', 'eventloom', 'replay me']) await post('/workflows/echo/execute', { input: { text } });
await post('/agents/assistant/text', { input: 'What is the weather in Lisbon?' });
const replay = (await post(`/workflows/order-approval/executions/${approved}/replay`, { stepId: 'approval-gate', inputData: { total: 155 }, resumeData: { approved: false } })).data;

const browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
await page.goto(`${server.url}/console`);
await page.waitForSelector('[data-feed="live"]');
await page.waitForSelector('.run-row');
await page.screenshot({ path: path.join(out, 'console-runs.png') });
await page.goto(`${server.url}/console?run=${approved}&wf=order-approval&step=parallel-checks`);
await page.waitForSelector('[data-run-status="completed"]');
await page.waitForSelector('[data-inspected-step="parallel-checks"]:has-text("stock")');
await page.screenshot({ path: path.join(out, 'console-run.png'), fullPage: true });
await page.goto(`${server.url}/console?run=${replay.executionId}&wf=order-approval&tab=diff`);
await page.waitForSelector('.diff-panel[data-first-diff]');
await page.click('[data-first-diff="true"]');
await page.screenshot({ path: path.join(out, 'console-replay-diff.png'), fullPage: true });
await browser.close();
await server.close();
rmSync(dataDir, { recursive: true, force: true });
console.log(`screenshots written to ${path.relative(process.cwd(), out)}/`);
