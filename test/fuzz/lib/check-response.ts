/**
 * What every answer of the server must look like, whatever was sent (docs/api-reference.md "Requests and answers", "Framing, heartbeats and slow readers"): a failure
 * is a 4xx with the JSON envelope `{success: false, error: <string>}` and no stack trace; a success has
 * the route's status and the shape its `produces` announces; an event stream is made of well-formed
 * frames. The only 5xx accepted are the ones the contract documents for outside failures (GET /updates
 * when the project's package.json cannot be read; the closed registry yields a 200 with reasons; POST /updates
 * never gets that far, see its guard) or
 * for the workflow's and the model's own failures; they are counted so the report shows them.
 */
import type { RouteDef } from '../../../src/contract/routes.js';
import type { RawResponse } from '../../reliability/lib/raw-http.js';

/** Documented 5xx answers (docs/api-reference.md "Agents", "Workflow routes", "Logs, observability and updates"), keyed by the route they may come from. */
const DOCUMENTED_5XX: Array<{ route: RegExp; error: RegExp; why: string }> = [
  { route: /^GET \/updates$/, error: /^Failed to check for updates: /, why: 'the project package.json could not be read' },
  { route: /^POST \/agents\/:id\/object$/, error: /^Generated object does not match schema: /, why: 'the demo model cannot satisfy every JSON Schema' },
  { route: /^POST \/workflows\/:id\/(execute|executions\/:executionId\/(resume|replay))$/, error: /^Failed to execute workflow$/, why: "the workflow's own step failed on the data" },
];

export interface Verdict {
  problem?: string;
  /** a documented 5xx was seen (why) */
  documented5xx?: string;
}

function envelopeProblem(res: RawResponse): string | undefined {
  const ct = String(res.headers['content-type'] ?? '');
  if (!ct.startsWith('application/json')) return `failure ${res.status} with content-type '${ct}' (expected application/json)`;
  let body: any;
  try {
    body = JSON.parse(res.body.toString('utf8'));
  } catch {
    return `failure ${res.status} body is not JSON: ${res.body.subarray(0, 200).toString('utf8')}`;
  }
  if (!body || typeof body !== 'object' || body.success !== false || typeof body.error !== 'string' || body.error === '') {
    return `failure ${res.status} body is not the envelope: ${res.body.subarray(0, 200).toString('utf8')}`;
  }
  if (/\n\s+at .+:\d+:\d+/.test(body.error)) return `failure ${res.status} leaks a stack trace: ${body.error.slice(0, 200)}`;
  return undefined;
}

/** Checks SSE text: frames separated by blank lines, each with `event:` and `id:` (the chat `[DONE]` excepted), `data:` JSON. */
function sseProblem(text: string, complete: boolean): string | undefined {
  const blocks = text.split('\n\n');
  // the last block is incomplete unless the stream ended
  const frames = complete ? blocks : blocks.slice(0, -1);
  for (const raw of frames) {
    if (raw === '') continue;
    const lines = raw.split('\n').filter((l) => !l.startsWith(':'));
    if (lines.length === 0) continue;
    const field = (name: string) => lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).replace(/^ /, ''));
    const data = field('data');
    if (data.length === 1 && data[0] === '[DONE]' && lines.length === 1) continue;
    if (field('event').length !== 1 || field('id').length !== 1) return `SSE frame without one event: and one id: line: ${raw.slice(0, 200)}`;
    if (data.length !== 1) return `SSE frame without exactly one data: line: ${raw.slice(0, 200)}`;
    let json: any;
    try {
      json = JSON.parse(data[0]);
    } catch {
      return `SSE data is not JSON: ${data[0].slice(0, 200)}`;
    }
    if (field('event')[0] === 'error' && json?.error === 'Internal server error') return `SSE in-band generic error frame: ${raw.slice(0, 200)}`;
  }
  return undefined;
}

export function checkResponse(route: RouteDef, res: RawResponse): Verdict {
  const key = `${route.method} ${route.path}`;
  const { status } = res;
  if (status >= 500) {
    const problem = envelopeProblem(res);
    if (problem) return { problem };
    const error = JSON.parse(res.body.toString('utf8')).error as string;
    const doc = DOCUMENTED_5XX.find((d) => d.route.test(key) && d.error.test(error));
    return doc ? { documented5xx: `${key} ${status} ${error.slice(0, 60)} (${doc.why})` } : { problem: `${status} ${error}` };
  }
  if (status >= 400) return { problem: envelopeProblem(res) };
  const produces = route.produces ?? 'json';
  const success = route.successStatus ?? 200;
  if (status === 204 && produces === 'sse') return res.body.length === 0 ? {} : { problem: '204 with a body' };
  if (status !== success) return { problem: `success status ${status}, the route answers ${success}` };
  const ct = String(res.headers['content-type'] ?? '');
  switch (produces) {
    case 'sse':
      if (!ct.startsWith('text/event-stream')) return { problem: `SSE route answered content-type '${ct}'` };
      return { problem: sseProblem(res.body.toString('utf8'), !res.sseCut) };
    case 'html':
      return ct === '' ? { problem: 'no content-type' } : {};
    case 'bare-json':
    case 'json': {
      if (!ct.startsWith('application/json')) return { problem: `JSON route answered content-type '${ct}'` };
      let body: any;
      try {
        body = JSON.parse(res.body.toString('utf8'));
      } catch {
        return { problem: `success body is not JSON: ${res.body.subarray(0, 200).toString('utf8')}` };
      }
      if (produces === 'json' && (body?.success !== true || !('data' in body))) return { problem: `success body is not the envelope: ${res.body.subarray(0, 200).toString('utf8')}` };
      return {};
    }
  }
}
