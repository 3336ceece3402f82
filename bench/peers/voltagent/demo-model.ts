/**
 * The VoltAgent peer's model: `MockLanguageModelV3` from `ai/test` (the `ai` major VoltAgent 2
 * uses) scripted to behave like eventloom's offline demo model (src/agents/models/demo-script.ts),
 * so both servers do the same model work per request:
 * - replies `You said: <last user text>`, streamed word by word (each piece a word with the
 *   whitespace before it), finish reason `stop`;
 * - a prompt mentioning the weather, with `getWeather` offered, first calls `getWeather`
 *   `{city}` (the capitalised word after "in"/"for"/"at", else Paris), and after the tool result
 *   answers `The weather in <City> is 21°C.`;
 * - usage: input tokens = words in the whole prompt (system text, text parts, tool inputs and
 *   outputs as JSON), output tokens = words produced (1 for a tool call).
 * Structured output (JSON mode) is not part of the benchmark fixture and is not scripted.
 */
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';

const WEATHER_TOOL = 'getWeather';
const DEFAULT_CITY = 'Paris';
const TEXT_ID = 'txt-0';

type Plan =
  | { kind: 'text'; pieces: string[]; finish: 'stop' | 'length'; inputTokens: number }
  | { kind: 'tool-call'; toolCallId: string; toolName: string; input: string; inputTokens: number };

export function createDemoModel(): MockLanguageModelV3 {
  const model: MockLanguageModelV3 = new MockLanguageModelV3({
    provider: 'eventloom-demo',
    modelId: 'demo (offline)',
    doGenerate: async (options) => {
      // The mock records every call for test assertions; a benchmark server must not grow with them.
      model.doGenerateCalls.length = 0;
      throwIfAborted(options.abortSignal);
      return generateResult(plan(options));
    },
    doStream: async (options) => {
      model.doStreamCalls.length = 0;
      throwIfAborted(options.abortSignal);
      const parts = streamParts(plan(options));
      const signal = options.abortSignal;
      let next = 0;
      const stream = new ReadableStream<LanguageModelV3StreamPart>(
        {
          pull(controller) {
            if (signal?.aborted) return controller.error(new DOMException('This operation was aborted', 'AbortError'));
            controller.enqueue(parts[next++]!);
            if (next === parts.length) controller.close();
          },
        },
        { highWaterMark: 0 },
      );
      return { stream };
    },
  });
  return model;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new DOMException('This operation was aborted', 'AbortError');
}

function plan(options: LanguageModelV3CallOptions): Plan {
  const prompt = options.prompt;
  const inputTokens = countPromptWords(prompt);
  const last = prompt[prompt.length - 1];
  if (last !== undefined && last.role === 'tool') {
    return textPlan(answerToolResults(last.content, lastUserText(prompt)), options.maxOutputTokens, inputTokens);
  }
  const userText = lastUserText(prompt);
  if (offersWeatherTool(options) && /weather/i.test(userText)) {
    return {
      kind: 'tool-call',
      toolCallId: `demo-call-${countToolCalls(prompt) + 1}`,
      toolName: WEATHER_TOOL,
      input: JSON.stringify({ city: parseCity(userText) ?? DEFAULT_CITY }),
      inputTokens,
    };
  }
  return textPlan(userText.length > 0 ? `You said: ${userText}` : 'You said nothing.', options.maxOutputTokens, inputTokens);
}

function textPlan(text: string, maxOutputTokens: number | undefined, inputTokens: number): Plan {
  const pieces = splitWords(text);
  if (maxOutputTokens !== undefined && maxOutputTokens >= 0 && pieces.length > maxOutputTokens) {
    pieces.length = maxOutputTokens;
    return { kind: 'text', pieces, finish: 'length', inputTokens };
  }
  return { kind: 'text', pieces, finish: 'stop', inputTokens };
}

function usage(inputTokens: number, outputTokens: number): LanguageModelV3Usage {
  return {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
  };
}

function finishReason(p: Plan): LanguageModelV3FinishReason {
  if (p.kind === 'tool-call') return { unified: 'tool-calls', raw: 'tool-calls' };
  return p.finish === 'length' ? { unified: 'length', raw: 'length' } : { unified: 'stop', raw: 'stop' };
}

const outputCount = (p: Plan) => (p.kind === 'tool-call' ? 1 : p.pieces.length);

function generateResult(p: Plan): LanguageModelV3GenerateResult {
  const content: LanguageModelV3Content[] =
    p.kind === 'tool-call'
      ? [{ type: 'tool-call', toolCallId: p.toolCallId, toolName: p.toolName, input: p.input }]
      : [{ type: 'text', text: p.pieces.join('') }];
  return { content, finishReason: finishReason(p), usage: usage(p.inputTokens, outputCount(p)), warnings: [] };
}

function streamParts(p: Plan): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (p.kind === 'tool-call') {
    const id = p.toolCallId;
    parts.push(
      { type: 'tool-input-start', id, toolName: p.toolName },
      { type: 'tool-input-delta', id, delta: p.input },
      { type: 'tool-input-end', id },
      { type: 'tool-call', toolCallId: id, toolName: p.toolName, input: p.input },
    );
  } else {
    parts.push({ type: 'text-start', id: TEXT_ID });
    for (const delta of p.pieces) parts.push({ type: 'text-delta', id: TEXT_ID, delta });
    parts.push({ type: 'text-end', id: TEXT_ID });
  }
  parts.push({ type: 'finish', finishReason: finishReason(p), usage: usage(p.inputTokens, outputCount(p)) });
  return parts;
}

type ToolContent = Extract<LanguageModelV3Prompt[number], { role: 'tool' }>['content'];

function answerToolResults(content: ToolContent, userText: string): string {
  const answers: string[] = [];
  for (const part of content) {
    if (part.type !== 'tool-result') continue;
    if (part.toolName === WEATHER_TOOL) {
      const city = cityFromOutput(part.output) ?? parseCity(userText) ?? DEFAULT_CITY;
      const failed = part.output.type === 'error-text' || part.output.type === 'error-json' || part.output.type === 'execution-denied';
      answers.push(failed ? `I could not get the weather in ${city}.` : `The weather in ${city} is 21°C.`);
    } else {
      answers.push(`${part.toolName} returned ${outputText(part.output)}.`);
    }
  }
  if (answers.length > 0) return answers.join(' ');
  return userText.length > 0 ? `You said: ${userText}` : 'You said nothing.';
}

function cityFromOutput(output: LanguageModelV3ToolResultOutput): string | undefined {
  let value: unknown;
  if (output.type === 'json' || output.type === 'error-json') value = output.value;
  else if (output.type === 'text' || output.type === 'error-text') {
    try {
      value = JSON.parse(output.value);
    } catch {
      return parseCity(output.value);
    }
  }
  if (value !== null && typeof value === 'object' && typeof (value as { city?: unknown }).city === 'string') {
    const city = (value as { city: string }).city.trim();
    return city.length > 0 ? city : undefined;
  }
  return undefined;
}

function outputText(output: LanguageModelV3ToolResultOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value);
    case 'execution-denied':
      return 'nothing (execution denied)';
    default:
      return 'content';
  }
}

function offersWeatherTool(options: LanguageModelV3CallOptions): boolean {
  if (options.toolChoice?.type === 'none' || options.tools === undefined) return false;
  return options.tools.some((t) => t.type === 'function' && t.name === WEATHER_TOOL);
}

function parseCity(text: string): string | undefined {
  return /(?:^|[^\p{L}\p{N}_])(?:[Ii]n|[Ff]or|[Aa]t)\s+(\p{Lu}[\p{L}\p{M}-]*)/u.exec(text)?.[1];
}

function lastUserText(prompt: LanguageModelV3Prompt): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const m = prompt[i]!;
    if (m.role !== 'user') continue;
    return m.content
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('\n')
      .trim();
  }
  return '';
}

function countToolCalls(prompt: LanguageModelV3Prompt): number {
  let n = 0;
  for (const m of prompt) if (m.role === 'assistant') for (const part of m.content) if (part.type === 'tool-call') n++;
  return n;
}

function countPromptWords(prompt: LanguageModelV3Prompt): number {
  let n = 0;
  for (const m of prompt) {
    if (m.role === 'system') {
      n += countWords(m.content);
      continue;
    }
    for (const part of m.content) {
      if (part.type === 'text' || part.type === 'reasoning') n += countWords(part.text);
      else if (part.type === 'tool-call') n += countWords(JSON.stringify(part.input) ?? '');
      else if (part.type === 'tool-result') n += countWords(outputText(part.output));
    }
  }
  return n;
}

function countWords(text: string): number {
  return text.split(/\s+/u).filter((w) => w.length > 0).length;
}

/** "You said: hi" → ["You", " said:", " hi"]: each word with the whitespace before it; concatenates back to the text. */
function splitWords(text: string): string[] {
  const pieces = text.match(/\s*\S+\s*$|\s*\S+/gu) ?? [];
  return pieces.length > 0 || text.length === 0 ? pieces : [text];
}
