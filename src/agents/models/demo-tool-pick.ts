/**
 * How the offline demo model uses an agent's own tools: it picks the tool a prompt names (its name,
 * or words of its description) and fills the call's arguments from the tool's JSON Schema, taking
 * values from the prompt where a property name matches ("from EUR to USD" → `{from: 'EUR', to: 'USD'}`,
 * "in Oslo" → `{city: 'Oslo'}`). Deterministic, so tests and demos see the same call every time.
 */
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { sampleFromJsonSchema } from '../../kernel/json-schema-sample.js';

export interface OfferedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** The city a location-like property gets when the prompt names none. */
export const DEFAULT_CITY = 'Paris';

/** Words too common to say which tool a prompt means. */
const STOP_WORDS = new Set(
  'about after again also another back been before being both could does doing down each even every from given have here into just like make many more most much only other over same should some such than that their them then there these they this those through tool under very want what when where which while will with would your returns return value values'.split(
    ' ',
  ),
);

/** Lower-case words of a text, camelCase and snake_case split ("convertCurrency" → convert, currency). */
export function wordsOf(text: string): string[] {
  return text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** Significant words of a description: four letters or more, not a stop word. */
function keywords(text: string): Set<string> {
  return new Set(wordsOf(text).filter((w) => w.length >= 4 && !STOP_WORDS.has(w)));
}

/** A prompt word matches a keyword when equal to it or a short inflection of it (convert → converts, converted). */
const matches = (word: string, key: string) => word === key || (word.startsWith(key) && word.length - key.length <= 2);

export function offeredTools(options: LanguageModelV3CallOptions): OfferedTool[] {
  if (options.toolChoice?.type === 'none' || options.tools === undefined) return [];
  const out: OfferedTool[] = [];
  for (const t of options.tools) {
    if (t.type !== 'function') continue;
    if (options.toolChoice?.type === 'tool' && options.toolChoice.toolName !== t.name) continue;
    out.push({ name: t.name, description: t.description ?? '', inputSchema: (t.inputSchema ?? {}) as Record<string, unknown> });
  }
  return out;
}

/**
 * The tool a prompt asks for: one whose name appears in it wins; otherwise the one sharing the most
 * description keywords with it (ties: the first offered). Undefined when no tool is mentioned.
 */
export function pickTool(tools: readonly OfferedTool[], prompt: string): OfferedTool | undefined {
  const lower = prompt.toLowerCase();
  const named = tools.find((t) => new RegExp(`(?:^|[^\\p{L}\\p{N}_])${escapeRegExp(t.name.toLowerCase())}(?:$|[^\\p{L}\\p{N}_])`, 'u').test(lower));
  if (named) return named;
  const words = wordsOf(prompt);
  let best: OfferedTool | undefined;
  let bestScore = 0;
  for (const t of tools) {
    let score = 0;
    for (const k of keywords(`${t.name} ${t.description}`)) if (words.some((w) => matches(w, k))) score++;
    if (score > bestScore) {
      best = t;
      bestScore = score;
    }
  }
  return best;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The capitalised word after "in", "for" or "at" ("What is the weather in Berlin?" → Berlin). */
export function parseCity(text: string): string | undefined {
  const m = /(?:^|[^\p{L}\p{N}_])(?:[Ii]n|[Ff]or|[Aa]t)\s+(\p{Lu}[\p{L}\p{M}-]*)/u.exec(text);
  return m?.[1];
}

type Schema = Record<string, unknown>;

const typeOf = (s: Schema): string | undefined => (typeof s.type === 'string' ? s.type : Array.isArray(s.type) ? (s.type as string[]).find((t) => t !== 'null') : undefined);

/**
 * Arguments for `tool`: a value valid against its schema, with each top-level property the prompt
 * names replaced by the value written after the name (`amount 100`, `to: USD`, `city=Oslo`); a
 * location-like property takes the city the prompt names; a number property the prompt does not
 * name takes the next number of the prompt not used yet.
 */
export function fillArguments(tool: OfferedTool, prompt: string): Record<string, unknown> {
  const sampled = sampleFromJsonSchema(tool.inputSchema);
  const args: Record<string, unknown> = sampled !== null && typeof sampled === 'object' && !Array.isArray(sampled) ? { ...sampled } : {};
  const props = (tool.inputSchema.properties ?? {}) as Record<string, Schema>;
  const numbers = [...prompt.matchAll(/-?\d+(?:\.\d+)?/g)].map((m) => m[0]);
  const used = new Set<string>();
  const unnamed: string[] = [];
  for (const [name, schema] of Object.entries(props)) {
    const place = /^(city|location|place|town)$/i.test(name);
    const raw = valueAfterName(prompt, name) ?? (place ? (parseCity(prompt) ?? DEFAULT_CITY) : undefined);
    const value = raw === undefined ? undefined : coerce(raw, schema);
    if (value !== undefined) {
      args[name] = value;
      if (typeof value === 'number') used.add(raw!);
    } else if (typeOf(schema) === 'number' || typeOf(schema) === 'integer') unnamed.push(name);
    else if (Array.isArray(schema.enum)) {
      const hit = (schema.enum as unknown[]).find((e) => typeof e === 'string' && prompt.toLowerCase().includes(e.toLowerCase()));
      if (hit !== undefined) args[name] = hit;
    }
  }
  const free = numbers.filter((n) => !used.has(n));
  for (const name of unnamed) {
    const n = free.shift();
    if (n === undefined) break;
    const v = coerce(n, props[name]);
    if (v !== undefined) args[name] = v;
  }
  return args;
}

/** The word, number or quoted text written right after a property name ("to USD", "amount: 100"). */
function valueAfterName(prompt: string, name: string): string | undefined {
  const re = new RegExp(`(?:^|[^\\p{L}\\p{N}_])${escapeRegExp(name)}\\s*(?:[:=]|\\bis\\b|\\bof\\b)?\\s*(?:"([^"]*)"|'([^']*)'|(-?\\d+(?:\\.\\d+)?|[\\p{L}\\p{N}_.@-]+))`, 'iu');
  const m = re.exec(prompt);
  if (!m) return undefined;
  return (m[1] ?? m[2] ?? m[3] ?? '').replace(/[.,;!?]+$/, '') || undefined;
}

function coerce(raw: string, schema: Schema): unknown {
  const type = typeOf(schema);
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).find((e) => String(e).toLowerCase() === raw.toLowerCase());
  if (type === 'number' || type === 'integer') {
    const n = Number(raw);
    if (!Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n))) return undefined;
    return n;
  }
  if (type === 'boolean') return /^(true|yes)$/i.test(raw) ? true : /^(false|no)$/i.test(raw) ? false : undefined;
  if (type === undefined || type === 'string') return raw;
  return undefined;
}
