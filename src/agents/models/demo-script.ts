/**
 * What the offline demo model says. Reads a LanguageModelV3 call (prompt, tools, response format)
 * and decides, deterministically, one of: an echo reply, a call of the tool the prompt names (see
 * demo-tool-pick.ts), an answer that reports the tool's real result, or a schema-valid JSON object.
 * The model wrapper in demo-model.ts only turns a plan into `doGenerate` content or `doStream` parts.
 *
 * "Tokens" here are whitespace-separated words: the demo has no tokenizer, and word counts keep
 * usage numbers meaningful and cheap to compute.
 */
import type { LanguageModelV3CallOptions, LanguageModelV3Prompt, LanguageModelV3ToolResultOutput } from '@ai-sdk/provider';
import { sampleFromJsonSchema } from '../../kernel/json-schema-sample.js';
import { DEFAULT_CITY, fillArguments, offeredTools, parseCity, pickTool } from './demo-tool-pick.js';

export { DEFAULT_CITY, parseCity };
const WEATHER_TOOL = 'getWeather';

export type DemoPlan =
  | { kind: 'text'; pieces: string[]; finish: 'stop' | 'length'; inputTokens: number }
  | { kind: 'object'; pieces: string[]; inputTokens: number }
  | { kind: 'tool-call'; toolCallId: string; toolName: string; input: string; inputTokens: number };

/** Characters per streamed piece of a JSON object: small enough that partial objects are visible. */
const OBJECT_CHUNK = 4;

export function planDemoReply(options: LanguageModelV3CallOptions): DemoPlan {
  const prompt = options.prompt;
  const inputTokens = countPromptWords(prompt);
  const json = options.responseFormat?.type === 'json' ? options.responseFormat : undefined;
  const last = prompt[prompt.length - 1];

  // A prompt that ends with tool results is the second half of a tool loop: answer from the result.
  if (last !== undefined && last.role === 'tool') {
    if (json) return objectPlan(json.schema, inputTokens);
    return textPlan(answerToolResults(last.content, lastUserText(prompt)), options.maxOutputTokens, inputTokens);
  }

  const userText = lastUserText(prompt);
  const tool = pickTool(offeredTools(options), userText);
  if (tool) {
    return {
      kind: 'tool-call',
      // Unique within the conversation (counts earlier calls) yet deterministic for a given prompt.
      toolCallId: `demo-call-${countToolCalls(prompt) + 1}`,
      toolName: tool.name,
      input: JSON.stringify(fillArguments(tool, userText)),
      inputTokens,
    };
  }
  if (json) return objectPlan(json.schema, inputTokens);
  return textPlan(echo(userText), options.maxOutputTokens, inputTokens);
}

function echo(userText: string): string {
  return userText.length > 0 ? `You said: ${userText}` : 'You said nothing.';
}

function textPlan(text: string, maxOutputTokens: number | undefined, inputTokens: number): DemoPlan {
  const pieces = splitWords(text);
  if (maxOutputTokens !== undefined && maxOutputTokens >= 0 && pieces.length > maxOutputTokens) {
    pieces.length = maxOutputTokens;
    return { kind: 'text', pieces, finish: 'length', inputTokens };
  }
  return { kind: 'text', pieces, finish: 'stop', inputTokens };
}

function objectPlan(schema: unknown, inputTokens: number): DemoPlan {
  // JSON mode without a schema still has to return JSON; an object with a text field is the honest minimum.
  const value = schema === undefined ? { text: 'You asked for JSON without a schema.' } : sampleFromJsonSchema(schema);
  const text = JSON.stringify(value) ?? 'null';
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += OBJECT_CHUNK) pieces.push(text.slice(i, i + OBJECT_CHUNK));
  return { kind: 'object', pieces, inputTokens };
}

function answerToolResults(content: Extract<LanguageModelV3Prompt[number], { role: 'tool' }>['content'], userText: string): string {
  const answers: string[] = [];
  for (const part of content) {
    if (part.type !== 'tool-result') continue;
    if (isErrorOutput(part.output)) answers.push(failureSentence(part.toolName, part.output));
    else if (part.toolName === WEATHER_TOOL) {
      const city = cityFromOutput(part.output) ?? parseCity(userText) ?? DEFAULT_CITY;
      answers.push(`The weather in ${city} ${describeWeather(part.output)}.`);
    } else answers.push(`${part.toolName} returned ${outputText(part.output)}.`);
  }
  return answers.length > 0 ? answers.join(' ') : echo(userText);
}

/**
 * A failed tool in one sentence: `getWeather failed: weather service down.` (the SDK hands a thrown error to the
 * model as `error-text`; an `error-json` value with a `message` says that message), or that it was denied.
 */
function failureSentence(toolName: string, output: LanguageModelV3ToolResultOutput): string {
  if (output.type === 'execution-denied') return `${toolName} was not run: ${output.reason ?? 'execution denied'}${endsSentence(output.reason ?? '') ? '' : '.'}`;
  let message = outputText(output).trim();
  if (output.type === 'error-json' && output.value !== null && typeof output.value === 'object' && typeof (output.value as { message?: unknown }).message === 'string') {
    message = (output.value as { message: string }).message.trim();
  }
  if (message === '') return `${toolName} failed.`;
  return `${toolName} failed: ${message}${endsSentence(message) ? '' : '.'}`;
}

const endsSentence = (text: string) => /[.!?]$/.test(text);

function isErrorOutput(output: LanguageModelV3ToolResultOutput): boolean {
  return output.type === 'error-text' || output.type === 'error-json' || output.type === 'execution-denied';
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

/**
 * What getWeather returned, in words: `is 21°C` from a `tempC`/`temperature` number (with the
 * `conditions`/`description` text when there is one), else the result itself (`: {...}`).
 */
function describeWeather(output: LanguageModelV3ToolResultOutput): string {
  let value: unknown;
  if (output.type === 'json') value = output.value;
  else if (output.type === 'text') {
    try {
      value = JSON.parse(output.value);
    } catch {
      return `: ${output.value}`;
    }
  }
  const v = (value ?? {}) as Record<string, unknown>;
  const temp = [v.tempC, v.temperature, v.temperatureC].find((t) => typeof t === 'number');
  const conditions = [v.conditions, v.condition, v.description].find((c) => typeof c === 'string' && c !== '');
  if (temp === undefined) return `: ${outputText(output)}`;
  return conditions === undefined ? `is ${temp}°C` : `is ${temp}°C, ${conditions as string}`;
}

export function mentionsWeather(text: string): boolean {
  return /weather/i.test(text);
}

/** Text of the last user message (its text parts joined by newlines), or '' when there is none. */
export function lastUserText(prompt: LanguageModelV3Prompt): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const m = prompt[i];
    if (m.role !== 'user') continue;
    let text = '';
    for (const part of m.content) {
      if (part.type !== 'text') continue;
      text = text.length === 0 ? part.text : `${text}\n${part.text}`;
    }
    return text.trim();
  }
  return '';
}

function countToolCalls(prompt: LanguageModelV3Prompt): number {
  let n = 0;
  for (const m of prompt) {
    if (m.role !== 'assistant') continue;
    for (const part of m.content) if (part.type === 'tool-call') n++;
  }
  return n;
}

/** Words across the prompt: system text, text and reasoning parts, tool inputs and outputs as JSON. */
function countPromptWords(prompt: LanguageModelV3Prompt): number {
  let n = 0;
  for (const m of prompt) {
    if (m.role === 'system') {
      n += countWords(m.content);
      continue;
    }
    for (const part of m.content) {
      switch (part.type) {
        case 'text':
        case 'reasoning':
          n += countWords(part.text);
          break;
        case 'tool-call':
          n += countWords(JSON.stringify(part.input) ?? '');
          break;
        case 'tool-result':
          n += countWords(outputText(part.output));
          break;
      }
    }
  }
  return n;
}

function isSpace(c: number): boolean {
  // ASCII fast path; the rare non-ASCII spaces go through the regex.
  if (c < 128) return c === 32 || (c >= 9 && c <= 13);
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

export function countWords(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i));
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

/**
 * Splits text into word pieces that concatenate back to the exact text: each piece is a word with
 * the whitespace before it ("You said: hi" → "You", " said:", " hi"); trailing space joins the last.
 */
export function splitWords(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  let i = 0;
  const len = text.length;
  while (i < len) {
    while (i < len && isSpace(text.charCodeAt(i))) i++; // leading whitespace stays with the word
    while (i < len && !isSpace(text.charCodeAt(i))) i++;
    if (i < len || start < len) {
      // Whitespace at the very end belongs to the last word rather than an empty piece.
      let end = i;
      if (end < len) {
        let j = end;
        while (j < len && isSpace(text.charCodeAt(j))) j++;
        if (j === len) end = len;
      }
      pieces.push(text.slice(start, end));
      start = end;
      i = end;
    }
  }
  return pieces;
}
