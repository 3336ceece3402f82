/**
 * Drives load for `npm run bench:peers` from a separate process: `wrk` when it is installed (timed
 * runs only), else autocannon in peer-load-worker.ts under tsx (and always for runs of an exact
 * request count); BENCH_PEERS_CLIENT=autocannon forces autocannon. Also checks one request by hand
 * before any timing, so a server that answers wrongly is reported as unable to serve the scenario
 * instead of being timed.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { LoadRequest, LoadResult } from './peer-load-worker.js';
import { missingExpectation, type Scenario } from './peer-scenarios.js';
import { wrkLoad, wrkVersion } from './peer-wrk.js';

export type { LoadResult } from './peer-load-worker.js';

const WORKER = path.join(import.meta.dirname, 'peer-load-worker.ts');
const AUTOCANNON_VERSION = (createRequire(import.meta.url)('autocannon/package.json') as { version: string }).version;
const WRK = process.env.BENCH_PEERS_CLIENT === 'autocannon' ? undefined : wrkVersion();

/** The load generator of timed runs, as reported. */
export const TIMED_CLIENT = WRK ?? `autocannon ${AUTOCANNON_VERSION}`;
/** The load generator of runs of an exact number of requests. */
export const COUNTED_CLIENT = `autocannon ${AUTOCANNON_VERSION}`;

/** Runs the load generator in its own process and returns its measurements. */
export function load(url: string, scenario: Scenario, connections: number, run: { durationS: number } | { amount: number }): Promise<LoadResult> {
  const req: LoadRequest = {
    url,
    method: scenario.method,
    path: scenario.path,
    ...(scenario.body === undefined ? {} : { body: scenario.body }),
    expect: scenario.expect,
    connections,
    ...run,
  };
  if (WRK !== undefined && 'durationS' in run) return wrkLoad({ ...req, durationS: run.durationS });
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(req)], { maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`load worker failed: ${err.message}\n${stderr}`));
      try {
        resolve(JSON.parse(stdout.trim().split('\n').pop()!) as LoadResult);
      } catch (e) {
        reject(new Error(`load worker printed no result: ${(e as Error).message}\n${stdout}\n${stderr}`));
      }
    });
  });
}

/** One request, read to its end: undefined when correct, else why not. */
export async function checkOnce(url: string, scenario: Scenario): Promise<string | undefined> {
  try {
    const res = await fetch(`${url}${scenario.path}`, {
      method: scenario.method,
      ...(scenario.body === undefined ? {} : { body: scenario.body, headers: { 'content-type': 'application/json' } }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = await res.text();
    if (res.status < 200 || res.status >= 300) return `HTTP ${res.status}: ${body.slice(0, 200)}`;
    const missing = missingExpectation(body, scenario.expect);
    return missing === undefined ? undefined : `body lacks ${missing}: ${body.slice(0, 200)}`;
  } catch (err) {
    return `request failed: ${(err as Error).message}`;
  }
}
