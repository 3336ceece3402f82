/**
 * Captured server log entries: the `LogEntry` shape of `/api/logs` and `/ws/logs` (docs/api-reference.md "Logs, observability and updates", "WebSocket feeds"), built
 * from one pino line, and the filter both routes apply (level minimum, entity ids, time bounds).
 *
 * Correlation keys a log line may carry (pino child bindings, see `logger-for.ts`): `component`, `agentId`,
 * `conversationId`, `userId`, `workflowId`, `executionId`, `parentExecutionId`, `stepId`, `runId`, `toolCallId`.
 */

export const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type LevelName = (typeof LEVELS)[number];

/** pino's numeric levels */
export const LEVEL_VALUES: Record<LevelName, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

function levelName(value: unknown): LevelName {
  if (typeof value === 'string' && (LEVELS as readonly string[]).includes(value.toLowerCase())) return value.toLowerCase() as LevelName;
  const n = typeof value === 'number' ? value : Number(value);
  if (n >= 60) return 'fatal';
  if (n >= 50) return 'error';
  if (n >= 40) return 'warn';
  if (n >= 30) return 'info';
  if (n >= 20) return 'debug';
  return 'trace';
}

export interface LogEntry {
  timestamp: string;
  level: LevelName;
  msg: string;
  component?: string;
  agentId?: string;
  conversationId?: string;
  workflowId?: string;
  executionId?: string;
  parentExecutionId?: string;
  userId?: string;
  error?: { type: string; message: string; stack?: string };
  [key: string]: unknown;
}

/** An entry plus what the filters and feeds need without re-parsing it. */
export interface CapturedLog {
  /** capture order, 1-based, never reused within a process */
  seq: number;
  /** epoch ms of `timestamp` */
  time: number;
  levelValue: number;
  entry: LogEntry;
}

/** Builds an entry from a pino JSON object (one parsed line). */
export function entryFromPino(obj: Record<string, unknown>, fallbackTime: number): { entry: LogEntry; time: number; levelValue: number } {
  const { time, level, msg, err, error, ...rest } = obj;
  const t = typeof time === 'number' ? time : typeof time === 'string' && !Number.isNaN(Date.parse(time)) ? Date.parse(time) : fallbackTime;
  const name = levelName(level);
  const entry: LogEntry = { timestamp: new Date(t).toISOString(), level: name, msg: typeof msg === 'string' ? msg : msg === undefined ? '' : String(msg), ...rest };
  const e = errorOf(err ?? error);
  if (e) entry.error = e;
  else if (error !== undefined) entry.error = { type: 'Error', message: typeof error === 'string' ? error : JSON.stringify(error) };
  return { entry, time: t, levelValue: LEVEL_VALUES[name] };
}

function errorOf(v: unknown): LogEntry['error'] | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.message !== 'string' && typeof o.type !== 'string') return undefined;
  const out: NonNullable<LogEntry['error']> = { type: typeof o.type === 'string' ? o.type : typeof o.name === 'string' ? o.name : 'Error', message: typeof o.message === 'string' ? o.message : '' };
  if (typeof o.stack === 'string') out.stack = o.stack;
  return out;
}

/** The filter of `/api/logs` and `/ws/logs`; every key optional, all given keys must match. */
export interface LogFilter {
  level?: LevelName;
  agentId?: string;
  conversationId?: string;
  workflowId?: string;
  /** also matches `parentExecutionId` */
  executionId?: string;
  /** epoch ms, inclusive */
  since?: number;
  /** epoch ms, inclusive */
  until?: number;
}

export function matchesLog(log: CapturedLog, f: LogFilter): boolean {
  const e = log.entry;
  if (f.level && log.levelValue < LEVEL_VALUES[f.level]) return false;
  if (f.agentId !== undefined && e.agentId !== f.agentId) return false;
  if (f.conversationId !== undefined && e.conversationId !== f.conversationId) return false;
  if (f.workflowId !== undefined && e.workflowId !== f.workflowId) return false;
  if (f.executionId !== undefined && e.executionId !== f.executionId && e.parentExecutionId !== f.executionId) return false;
  if (f.since !== undefined && log.time < f.since) return false;
  if (f.until !== undefined && log.time > f.until) return false;
  return true;
}
