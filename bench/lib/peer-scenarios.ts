/**
 * The requests `npm run bench:peers` times on both servers, each with the substrings a correct
 * response body must contain (checked once before timing, and on every response under load).
 */
export interface Scenario {
  id: string;
  /** what the table shows */
  label: string;
  /** a shorter label for the chart */
  chartLabel: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** every one must occur in a correct (2xx) body */
  expect: string[];
  /** target: eventloom req/s ÷ VoltAgent req/s at 10 connections, at least */
  targetRatio: number;
}

const ECHO_BODY = JSON.stringify({ input: { text: 'hello bench' } });
const TEXT_INPUT = 'Hello benchmark, how are you today?';

export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'agents-list',
    label: 'GET /agents',
    chartLabel: 'GET /agents',
    method: 'GET',
    path: '/agents',
    expect: ['"success":true', '"id":"assistant"'],
    targetRatio: 10,
  },
  {
    id: 'workflow-execute',
    label: 'POST /workflows/echo/execute',
    chartLabel: 'POST echo/execute',
    method: 'POST',
    path: '/workflows/echo/execute',
    body: ECHO_BODY,
    expect: ['"success":true', '"status":"completed"', '"result":{"text":"hello bench"}'],
    targetRatio: 8,
  },
  {
    id: 'agent-text',
    label: 'POST /agents/assistant/text',
    chartLabel: 'POST assistant/text',
    method: 'POST',
    path: '/agents/assistant/text',
    body: JSON.stringify({ input: TEXT_INPUT }),
    expect: ['"success":true', `"text":"You said: ${TEXT_INPUT}"`, '"finishReason":"stop"'],
    targetRatio: 8,
  },
  {
    id: 'workflow-stream',
    label: 'POST /workflows/echo/stream (SSE)',
    chartLabel: 'POST echo/stream (SSE)',
    method: 'POST',
    path: '/workflows/echo/stream',
    body: ECHO_BODY,
    // the final event of the stream: the execution result
    expect: ['"type":"workflow-complete"', '"type":"workflow-result"', '"status":"completed"', '"result":{"text":"hello bench"}'],
    targetRatio: 8,
  },
];

/** The first expected substring missing from `body`, or undefined when the body is correct. */
export function missingExpectation(body: string, expect: readonly string[]): string | undefined {
  return expect.find((e) => !body.includes(e));
}
