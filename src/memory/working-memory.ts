/**
 * Working memory: a small document (markdown, or JSON checked by a zod schema) kept per
 * conversation or per user and offered to the model with every call. This module holds the
 * update rules of docs/api-reference.md "Memory routes": `replace` (default) or `append` (markdown: old + blank line +
 * new; JSON: deep merge with objects merged, arrays concatenated without duplicates, scalars
 * replaced), and the validation that turns bad content into 400s.
 */
import type { ZodType } from 'zod';
import { badRequest, formatIssues } from '../errors.js';
import { checkSchemaSlot } from '../kernel/schema-slot.js';
import type { WorkingMemoryFormat, WorkingMemoryScope } from './types.js';

export interface WorkingMemoryConfig {
  enabled?: boolean;
  /** `conversation` (default): one document per conversation; `user`: one per user, shared by their conversations */
  scope?: WorkingMemoryScope;
  /** default `markdown`, or `json` when a schema is given */
  format?: WorkingMemoryFormat;
  /** markdown template shown to the model until the memory has content */
  template?: string;
  /** zod schema of schema-based (JSON) working memory */
  schema?: ZodType;
}

export interface ResolvedWorkingMemory {
  enabled: boolean;
  scope: WorkingMemoryScope;
  format: WorkingMemoryFormat;
  template: string | null;
  schema?: ZodType;
}

const WORKING_MEMORY_OFF: ResolvedWorkingMemory = { enabled: false, scope: 'conversation', format: 'markdown', template: null };

/** Start-up check of a working-memory setting's schema slot (`where` names the config entry). */
export function checkWorkingMemoryConfig(where: string, cfg: boolean | WorkingMemoryConfig | undefined): void {
  if (cfg !== null && typeof cfg === 'object') checkSchemaSlot(where, 'workingMemory.schema', cfg.schema);
}

export function resolveWorkingMemory(cfg: boolean | WorkingMemoryConfig | undefined): ResolvedWorkingMemory {
  if (cfg === undefined || cfg === false) return WORKING_MEMORY_OFF;
  if (cfg === true) return { ...WORKING_MEMORY_OFF, enabled: true };
  return {
    enabled: cfg.enabled !== false,
    scope: cfg.scope ?? 'conversation',
    format: cfg.format ?? (cfg.schema ? 'json' : 'markdown'),
    template: cfg.template ?? null,
    schema: cfg.schema,
  };
}

export type WorkingMemoryMode = 'replace' | 'append';

const invalid = (issues: string) => badRequest(`Failed to validate working memory: ${issues}`);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The stored text after applying `content` with `mode` to `current` (undefined when none yet). */
export function applyWorkingMemoryUpdate(current: string | undefined, content: unknown, mode: WorkingMemoryMode, wm: ResolvedWorkingMemory): string {
  if (wm.format === 'markdown') {
    if (typeof content !== 'string') throw invalid('content: must be a string for markdown working memory');
    if (mode === 'append' && current !== undefined && current !== '') return content === '' ? current : `${current}\n\n${content}`;
    return content;
  }
  let value: unknown = content;
  if (typeof content === 'string') {
    try {
      value = JSON.parse(content);
    } catch {
      throw invalid('content: must be a JSON object or JSON text');
    }
  }
  if (mode === 'append' && current !== undefined) {
    let base: unknown;
    try {
      base = JSON.parse(current);
    } catch {
      base = undefined;
    }
    value = deepMerge(base, value);
  }
  if (wm.schema) {
    const r = wm.schema.safeParse(value);
    if (!r.success) throw invalid(formatIssues(r.error.issues, 'content'));
    value = r.data;
  }
  const text = JSON.stringify(value);
  if (text === undefined) throw invalid('content: must be JSON');
  return text;
}

/** Objects merged key by key, arrays concatenated without (deeply equal) duplicates, anything else replaced. */
export function deepMerge(base: unknown, patch: unknown): unknown {
  if (isObject(base) && isObject(patch)) {
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of Object.entries(patch)) out[k] = k in base ? deepMerge(base[k], v) : v;
    return out;
  }
  if (Array.isArray(base) && Array.isArray(patch)) {
    const out = [...base];
    const seen = new Set(base.map((v) => stableJson(v)));
    for (const v of patch) {
      const key = stableJson(v);
      if (!seen.has(key)) {
        seen.add(key);
        out.push(v);
      }
    }
    return out;
  }
  return patch === undefined ? base : patch;
}

/** JSON with object keys sorted, so equal values compare equal whatever their key order. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** The system-prompt section offering working memory to the model. */
export function workingMemorySection(content: string | undefined, wm: ResolvedWorkingMemory): string {
  const body = content ?? wm.template ?? '';
  const kind = wm.format === 'json' ? 'JSON document' : 'markdown document';
  return ['## Working memory', `What you remember about this ${wm.scope === 'user' ? 'user' : 'conversation'} (a ${kind}; keep it in mind when answering):`, body === '' ? '(empty)' : body].join('\n');
}
