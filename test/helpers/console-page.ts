/**
 * Pages of the console in a real Chromium whose requests and console errors are recorded, and the closing check
 * every console test ends with: the page stayed on its origin, no answer >= 400 it did not expect, no error logged.
 */
import { expect } from 'vitest';
import type { Browser, Page } from 'playwright-core';

export interface Watched {
  page: Page;
  outside: string[];
  errors: string[];
  /** `<status> <path>` of every answer >= 400 */
  failed: string[];
}

/** Opens `base + path` in a new page of `browser`, recording requests, failed answers and console errors. */
export async function openWatchedPage(browser: Browser, base: string, path: string, { goto = true }: { goto?: boolean } = {}): Promise<Watched> {
  const page = await browser.newPage();
  const w: Watched = { page, outside: [], errors: [], failed: [] };
  page.on('response', (res) => {
    if (res.status() >= 400) w.failed.push(`${res.status()} ${new URL(res.url()).pathname}`);
  });
  page.on('request', (req) => {
    if (!req.url().startsWith(base) && !req.url().startsWith(base.replace('http:', 'ws:'))) w.outside.push(req.url());
  });
  page.on('console', (m) => {
    if (m.type() === 'error') w.errors.push(m.text());
  });
  page.on('pageerror', (e) => w.errors.push(e.message));
  if (goto) await page.goto(`${base}${path}`);
  return w;
}

/**
 * Closes the page and checks it stayed on its origin and logged no error. Chromium logs every answer >= 400 as a
 * console error; `expectedFailures` names the answers a test provokes on purpose (`<status> <path regex>`), and
 * those console lines are then accounted for by them. `allowedErrors` covers a deliberately cut network.
 */
export async function closeClean(w: Watched, { expectedFailures = [], allowedErrors = [] }: { expectedFailures?: RegExp[]; allowedErrors?: RegExp[] } = {}) {
  await w.page.close();
  expect(w.outside).toEqual([]);
  expect(w.failed.filter((f) => !expectedFailures.some((r) => r.test(f)))).toEqual([]);
  const resourceErrors = w.errors.filter((e) => /^Failed to load resource: the server responded with a status of/.test(e));
  expect(resourceErrors.length).toBeLessThanOrEqual(w.failed.length);
  const others = w.errors.filter((e) => !resourceErrors.includes(e) && !allowedErrors.some((r) => r.test(e)));
  expect(others).toEqual([]);
}
