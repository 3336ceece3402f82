/**
 * The pino capture: every entry of the root logger and its children lands in the buffer with its bindings, the
 * original destination receives only what it received before, and the buffer is bounded.
 */
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import { LogCapture } from '../../src/observability/log-capture.js';
import { loggerFor } from '../../src/kernel/logger-for.js';

function sinkLogger(level: string) {
  const lines: string[] = [];
  const dest = new Writable({
    write(chunk, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { logger: pino({ level, base: undefined }, dest), lines };
}

describe('LogCapture', () => {
  it('captures entries of the root logger and of children created before and after installation, with their bindings', () => {
    const { logger } = sinkLogger('info');
    const early = logger.child({ component: 'early' });
    const capture = new LogCapture();
    capture.install(logger);
    const late = loggerFor(logger, { workflowId: 'w', executionId: 'e', parentExecutionId: undefined });
    logger.info('root');
    early.warn({ extra: 1 }, 'early child');
    late.error('late child');
    const entries = capture.recent.toArray().map((l) => l.entry);
    expect(entries.map((e) => e.msg)).toEqual(['root', 'early child', 'late child']);
    expect(entries[1]).toMatchObject({ level: 'warn', component: 'early', extra: 1 });
    expect(entries[2]).toMatchObject({ level: 'error', workflowId: 'w', executionId: 'e' });
    expect(entries[2]).not.toHaveProperty('parentExecutionId');
    expect(Date.parse(entries[0].timestamp)).not.toBeNaN();
  });

  it('keeps the destination output unchanged while capturing below the original level', () => {
    const { logger, lines } = sinkLogger('warn');
    const capture = new LogCapture();
    capture.install(logger, { captureLevel: 'debug' });
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    expect(capture.recent.toArray().map((l) => l.entry.msg)).toEqual(['d', 'i', 'w']);
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['w']);
  });

  it('captures from a silent logger and restores it on uninstall', () => {
    const { logger, lines } = sinkLogger('silent');
    const capture = new LogCapture();
    capture.install(logger);
    logger.info('seen by the capture only');
    logger.debug('below the capture level');
    capture.uninstall();
    logger.info('after uninstall');
    expect(capture.recent.toArray().map((l) => l.entry.msg)).toEqual(['seen by the capture only']);
    expect(lines).toEqual([]);
    expect(logger.level).toBe('silent');
  });

  it('turns a logged error into {type, message, stack}', () => {
    const { logger } = sinkLogger('info');
    const capture = new LogCapture();
    capture.install(logger);
    const err = new TypeError('bad thing');
    logger.error({ err }, 'failed');
    const e = capture.recent.toArray()[0].entry;
    expect(e.error).toMatchObject({ type: 'TypeError', message: 'bad thing' });
    expect(e.error?.stack).toContain('bad thing');
    expect(e).not.toHaveProperty('err');
  });

  it('keeps only the last 1000 entries', () => {
    const { logger } = sinkLogger('info');
    const capture = new LogCapture();
    capture.install(logger);
    for (let i = 0; i < 1500; i++) logger.info({ i }, 'n');
    const all = capture.recent.toArray();
    expect(all).toHaveLength(1000);
    expect(all[0].entry.i).toBe(500);
    expect(all[999].entry.i).toBe(1499);
  });

  it('delivers entries to listeners and survives a listener that throws or logs', () => {
    const { logger } = sinkLogger('info');
    const capture = new LogCapture();
    capture.install(logger);
    const seen: string[] = [];
    capture.onLog(() => {
      throw new Error('listener bug');
    });
    capture.onLog((l) => {
      seen.push(l.entry.msg);
      if (l.entry.msg === 'first') logger.info('logged from a listener');
    });
    logger.info('first');
    logger.info('second');
    expect(seen).toEqual(['first', 'second']);
    expect(capture.recent.toArray().map((l) => l.entry.msg)).toEqual(['first', 'logged from a listener', 'second']);
  });
});
