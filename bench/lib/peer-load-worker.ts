/**
 * Load generator of `npm run bench:peers`, run as its own process (so it never shares an event
 * loop with the bench driver): autocannon as a library against one loopback URL, reading every
 * response to its end and checking its status and body. Latencies are recorded per response at
 * sub-millisecond resolution (autocannon's own histogram rounds to whole ms). Prints one JSON
 * line (LoadResult) on stdout. Input: one JSON argument (LoadRequest).
 */
import autocannon from 'autocannon';
import { missingExpectation } from './peer-scenarios.js';

export interface LoadRequest {
  url: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  expect: string[];
  connections: number;
  /** seconds; ignored when `amount` is set */
  durationS?: number;
  /** exact number of requests to send */
  amount?: number;
}

export interface LoadResult {
  elapsedS: number;
  responses: number;
  /** 2xx with a correct body */
  ok: number;
  /** non-2xx, or 2xx with a body missing an expected part */
  bad: number;
  errors: number;
  timeouts: number;
  /** correct responses per second */
  reqPerSec: number;
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  /** one wrong answer, cut to 300 characters, when there was any */
  badSample?: string;
}

const MAX_LATENCIES = 2_000_000;

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function run(req: LoadRequest): Promise<LoadResult> {
  let ok = 0;
  let bad = 0;
  let badSample: string | undefined;
  const latencies = new Float64Array(MAX_LATENCIES);
  let n = 0;
  const headers: Record<string, string> = req.body === undefined ? {} : { 'content-type': 'application/json' };
  const t0 = performance.now();
  const options: autocannon.Options = {
    url: req.url,
    connections: req.connections,
    ...(req.amount !== undefined ? { amount: req.amount } : { duration: req.durationS ?? 5 }),
    timeout: 30,
    requests: [
      {
        method: req.method,
        path: req.path,
        headers,
        ...(req.body === undefined ? {} : { body: req.body }),
        onResponse: (status: number, body: string) => {
          const wrong = status < 200 || status >= 300 ? `HTTP ${status}` : missingExpectation(body, req.expect);
          if (wrong === undefined) ok++;
          else {
            bad++;
            badSample ??= `${wrong === `HTTP ${status}` ? wrong : `missing ${wrong}`}: ${body.slice(0, 300)}`;
          }
        },
      },
    ],
  };
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (err: unknown, res: autocannon.Result) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(res)));
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      if (n < MAX_LATENCIES) latencies[n++] = responseTime;
    });
  });
  const elapsedS = (performance.now() - t0) / 1000;
  const sorted = latencies.subarray(0, n).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i];
  return {
    elapsedS,
    responses: ok + bad,
    ok,
    bad,
    errors: result.errors,
    timeouts: result.timeouts,
    reqPerSec: ok / elapsedS,
    latencyMs: { mean: n > 0 ? sum / n : NaN, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: n > 0 ? sorted[n - 1] : NaN },
    ...(badSample === undefined ? {} : { badSample }),
  };
}

const request = JSON.parse(process.argv[2] ?? '{}') as LoadRequest;
const result = await run(request);
process.stdout.write(`${JSON.stringify(result)}\n`);
