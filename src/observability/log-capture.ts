/**
 * Captures every entry the server's pino logger writes, whoever created the logger (the CLI, a test, the
 * composition root): the logger's destination stream is wrapped in place, so the root logger and every child
 * (existing or future) write through the capture. The original destination keeps receiving exactly the lines
 * it received before (lines below the logger's original level are captured but not forwarded).
 *
 * Capture level: `info` by default (option `captureLevel`, env `EVENTLOOM_LOG_CAPTURE_LEVEL`); when the logger
 * was quieter (e.g. `silent` in tests), its level is lowered to the capture level and the extra lines go only
 * to the capture. Retention: the last 1000 entries serve `/api/logs` and the first batch of `/ws/logs`; entries
 * live in memory only and are gone after a restart (spans are rebuilt from the event log, logs are not).
 */
import pino, { type Logger } from 'pino';
import { entryFromPino, LEVEL_VALUES, matchesLog, type CapturedLog, type LevelName, type LogFilter } from './log-entry.js';
import { Ring } from './ring.js';

const API_LOG_CAPACITY = 1000;

type Listener = (log: CapturedLog) => void;

interface PinoStream {
  write(s: string): unknown;
  flush?: (cb?: (err?: Error) => void) => void;
  flushSync?: () => void;
  end?: () => void;
  [key: string | symbol]: unknown;
}

export interface LogCaptureOptions {
  captureLevel?: LevelName;
  capacity?: number;
}

export class LogCapture {
  readonly recent: Ring<CapturedLog>;
  private readonly listeners = new Set<Listener>();
  private seq = 0;
  private dispatching = false;
  private restore: (() => void) | undefined;

  constructor(opts: { capacity?: number } = {}) {
    this.recent = new Ring(opts.capacity ?? API_LOG_CAPACITY);
  }

  /** Wraps `logger`'s destination. Idempotent per capture; `uninstall` puts the logger back as it was. */
  install(logger: Logger, opts: LogCaptureOptions = {}): void {
    if (this.restore) return;
    const streamSym = pino.symbols.streamSym as unknown as symbol;
    const metaSym = pino.symbols.needsMetadataGsym as unknown as symbol;
    const holder = logger as unknown as Record<symbol, PinoStream>;
    const original = holder[streamSym];
    const originalLevel = logger.level;
    const originalValue = logger.levelVal;
    const captureValue = LEVEL_VALUES[opts.captureLevel ?? 'info'];
    if (captureValue < originalValue) logger.level = opts.captureLevel ?? 'info';
    const forwardFrom = originalValue;
    const originalNeedsMeta = original[metaSym] === true;
    const wrapper: PinoStream = {
      [metaSym]: true,
      write: (line: string) => {
        const level = typeof wrapper.lastLevel === 'number' ? wrapper.lastLevel : Infinity;
        if (level >= captureValue) this.ingestLine(line);
        if (level >= forwardFrom) {
          if (originalNeedsMeta) {
            for (const k of ['lastLevel', 'lastObj', 'lastMsg', 'lastTime', 'lastLogger']) original[k] = wrapper[k];
          }
          return original.write(line);
        }
        return true;
      },
      flush: (cb?: (err?: Error) => void) => (original.flush ? original.flush(cb) : cb?.()),
      flushSync: () => original.flushSync?.(),
      end: () => original.end?.(),
    };
    holder[streamSym] = wrapper;
    this.restore = () => {
      holder[streamSym] = original;
      if (logger.level !== originalLevel) logger.level = originalLevel;
    };
  }

  uninstall(): void {
    this.restore?.();
    this.restore = undefined;
  }

  /** Called for every captured entry, in capture order. */
  onLog(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Adds one pino line (also usable directly by tests and other sources). */
  ingestLine(line: string): void {
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch {
      obj = { msg: line.trim(), level: 30 };
    }
    if (!obj || typeof obj !== 'object' || Array.isArray(obj)) obj = { msg: String(obj), level: 30 };
    this.ingest(obj as Record<string, unknown>);
  }

  ingest(obj: Record<string, unknown>): CapturedLog {
    const { entry, time, levelValue } = entryFromPino(obj, Date.now());
    const log: CapturedLog = { seq: ++this.seq, time, levelValue, entry };
    this.recent.push(log);
    // a listener that logs (e.g. an error while publishing) must not recurse into the feeds
    if (this.dispatching) return log;
    this.dispatching = true;
    try {
      for (const l of this.listeners) {
        try {
          l(log);
        } catch {
          /* a failing listener never breaks the logger */
        }
      }
    } finally {
      this.dispatching = false;
    }
    return log;
  }

  /** The most recent `limit` matches of the buffer, oldest first. */
  query(filter: LogFilter, limit: number): CapturedLog[] {
    return this.recent.newest((l) => matchesLog(l, filter), limit).reverse();
  }
}
