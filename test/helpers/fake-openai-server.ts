/**
 * A small real OpenAI-compatible HTTP server for tests of the provider path: node:http on
 * 127.0.0.1, an ephemeral port, speaking just enough of the OpenAI API for the `ai` SDK's
 * OpenAI-compatible provider: chat completions (plain JSON and `stream: true` SSE, usage, tool
 * calls, json_schema response formats), embeddings and the model list.
 *
 * Its answers mirror the offline demo model so tests can assert the same sentences on both paths:
 * `You said: <last user text>`; a `tool_calls` reply for the first offered tool when the last user
 * message mentions weather (arguments `{city}` from "in/for/at <City>", default Paris); and
 * `The weather in <City> is 21°C.` once the last message is that tool's result.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_CITY, countWords, mentionsWeather, parseCity, splitWords } from '../../src/agents/models/demo-script.js';
import { sampleFromJsonSchema } from '../../src/kernel/json-schema-sample.js';

export interface FakeOpenAIServerOptions {
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401 like OpenAI's. */
  apiKey?: string;
  /** Delay between streamed chunks, to test slow streams and client aborts. */
  chunkDelayMs?: number;
  /** Every chat completion request fails with this status and OpenAI-style error body. */
  failWith?: { status: number; message: string };
  /** Length of embedding vectors when the request does not ask for `dimensions` (default 8). */
  embeddingDimensions?: number;
}

interface FakeOpenAICall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface FakeOpenAIServer {
  /** Base URL including `/v1`, as the providers expect it. */
  url: string;
  /** Parsed JSON bodies of every request, in arrival order. */
  requests: any[];
  /** Every request with method, path and headers (e.g. to check the Authorization header). */
  calls: FakeOpenAICall[];
  close(): Promise<void>;
}

const MODEL_FALLBACK = 'fake-model';

export async function startFakeOpenAIServer(opts: FakeOpenAIServerOptions = {}): Promise<FakeOpenAIServer> {
  const requests: any[] = [];
  const calls: FakeOpenAICall[] = [];
  let counter = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, err instanceof Error ? err.message : String(err), 'server_error');
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: any = undefined;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch {
        return sendError(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
      }
    }
    const path = (req.url ?? '/').split('?')[0];
    requests.push(body);
    calls.push({ method: req.method ?? 'GET', path, headers: req.headers, body });

    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return sendError(res, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    }
    if (req.method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, { object: 'list', data: [{ id: MODEL_FALLBACK, object: 'model', created: 0, owned_by: 'fake' }] });
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      if (opts.failWith) return sendError(res, opts.failWith.status, opts.failWith.message, 'server_error');
      if (!body || !Array.isArray(body.messages)) {
        return sendError(res, 400, "'messages' is a required property", 'invalid_request_error');
      }
      return chatCompletion(body, res, `chatcmpl-fake-${++counter}`);
    }
    if (req.method === 'POST' && path === '/v1/embeddings') return embeddings(body, res);
    sendError(res, 404, `Unknown request URL: ${req.method} ${path}`, 'invalid_request_error');
  }

  async function chatCompletion(body: any, res: ServerResponse, id: string): Promise<void> {
    const answer = decide(body);
    const model = typeof body.model === 'string' ? body.model : MODEL_FALLBACK;
    const created = Math.floor(Date.now() / 1000);
    const promptTokens = body.messages.reduce((n: number, m: any) => n + countWords(messageText(m)), 0);
    const completionTokens = answer.kind === 'text' ? countWords(answer.text) : 1;
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };

    if (body.stream !== true) {
      const message =
        answer.kind === 'text'
          ? { role: 'assistant', content: answer.text }
          : { role: 'assistant', content: null, tool_calls: [{ id: answer.id, type: 'function', function: { name: answer.name, arguments: answer.arguments } }] };
      return sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, finish_reason: answer.kind === 'text' ? 'stop' : 'tool_calls' }],
        usage,
      });
    }

    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    const chunk = (delta: object, finish: string | null) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const frames: object[] = [];
    if (answer.kind === 'text') {
      frames.push(chunk({ role: 'assistant', content: '' }, null));
      for (const piece of splitWords(answer.text)) frames.push(chunk({ content: piece }, null));
      frames.push(chunk({}, 'stop'));
    } else {
      const half = Math.ceil(answer.arguments.length / 2);
      frames.push(
        chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: answer.id, type: 'function', function: { name: answer.name, arguments: '' } }] }, null),
        chunk({ tool_calls: [{ index: 0, function: { arguments: answer.arguments.slice(0, half) } }] }, null),
        chunk({ tool_calls: [{ index: 0, function: { arguments: answer.arguments.slice(half) } }] }, null),
        chunk({}, 'tool_calls'),
      );
    }
    // As OpenAI does: usage arrives in one extra chunk with no choices, only when asked for.
    if (body.stream_options?.include_usage === true) frames.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage });

    for (const frame of frames) {
      if (res.destroyed) return; // the client aborted
      res.write(`data: ${JSON.stringify(frame)}\n\n`);
      if (opts.chunkDelayMs) await new Promise((r) => setTimeout(r, opts.chunkDelayMs));
    }
    if (!res.destroyed) res.end('data: [DONE]\n\n');
  }

  function embeddings(body: any, res: ServerResponse): void {
    const inputs: unknown[] = Array.isArray(body?.input) ? body.input : [body?.input];
    if (inputs.some((x) => typeof x !== 'string')) {
      return sendError(res, 400, "'input' must be a string or an array of strings", 'invalid_request_error');
    }
    const dims = typeof body.dimensions === 'number' ? body.dimensions : (opts.embeddingDimensions ?? 8);
    const tokens = inputs.reduce((n: number, s) => n + countWords(s as string), 0);
    sendJson(res, 200, {
      object: 'list',
      data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: embed(text as string, dims) })),
      model: typeof body.model === 'string' ? body.model : MODEL_FALLBACK,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    calls,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections(); // keep-alive sockets would otherwise hold close() open
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

type Answer = { kind: 'text'; text: string } | { kind: 'tool'; id: string; name: string; arguments: string };

function decide(body: any): Answer {
  const messages: any[] = body.messages;
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return { kind: 'text', text: answerToolResult(messages, last) };

  const userText = lastUserText(messages);
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const first = tools.find((t) => t?.type === 'function' && typeof t.function?.name === 'string');
  if (first && body.tool_choice !== 'none' && mentionsWeather(userText)) {
    const previousCalls = messages.reduce((n, m) => n + (Array.isArray(m.tool_calls) ? m.tool_calls.length : 0), 0);
    return {
      kind: 'tool',
      id: `call_fake_${previousCalls + 1}`,
      name: first.function.name,
      arguments: JSON.stringify({ city: parseCity(userText) ?? DEFAULT_CITY }),
    };
  }
  const format = body.response_format;
  if (format?.type === 'json_schema' && format.json_schema?.schema) {
    return { kind: 'text', text: JSON.stringify(sampleFromJsonSchema(format.json_schema.schema)) };
  }
  if (format?.type === 'json_object') return { kind: 'text', text: JSON.stringify({ text: `You said: ${userText}` }) };
  return { kind: 'text', text: userText.length > 0 ? `You said: ${userText}` : 'You said nothing.' };
}

function answerToolResult(messages: any[], last: any): string {
  const content = messageText(last);
  let city: string | undefined;
  try {
    const parsed = JSON.parse(content);
    if (parsed && typeof parsed.city === 'string') city = parsed.city;
  } catch {
    city = parseCity(content);
  }
  city ??= parseCity(lastUserText(messages));
  return city !== undefined ? `The weather in ${city} is 21°C.` : `The tool returned ${content}.`;
}

function lastUserText(messages: any[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === 'user') return messageText(messages[i]).trim();
  return '';
}

/** Message content as text: a string, or the text parts of a content array joined by newlines. */
function messageText(m: any): string {
  if (typeof m?.content === 'string') return m.content;
  if (Array.isArray(m?.content)) {
    return m.content
      .filter((p: any) => p?.type === 'text' && typeof p.text === 'string')
      .map((p: any) => p.text)
      .join('\n');
  }
  return '';
}

/**
 * A deterministic unit vector: words hashed (FNV-1a) into buckets, then normalised, so texts that
 * share words point in similar directions and similarity search in tests behaves sensibly.
 */
function embed(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (word.length === 0) continue;
    let h = 0x811c9dc5;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193) >>> 0;
    v[h % dims] += 1;
  }
  const norm = Math.hypot(...v);
  if (norm === 0) {
    v[0] = 1;
    return v;
  }
  return v.map((x) => x / norm);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, message: string, type: string, code: string | null = null): void {
  sendJson(res, status, { error: { message, type, param: null, code } });
}
