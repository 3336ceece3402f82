/**
 * The server's loggers write an error as `{type, message, stack}`: a DOMException from an aborted fetch no
 * longer lists its legacy code constants, a fetch failure names its cause, and a logger handed in from outside
 * (with children made before and after) writes errors the same way.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { LOG_SERIALIZERS, serializeLogError, useLogErrorSerializer } from '../../src/observability/log-errors.js';
import { startLocalServer } from './helpers.js';

function collecting(options: pino.LoggerOptions = {}) {
  const lines: Array<Record<string, any>> = [];
  const logger = pino({ level: 'info', ...options }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

async function timedOutFetch(): Promise<unknown> {
  const hanging = await startLocalServer(() => undefined);
  try {
    await fetch(hanging.url, { signal: AbortSignal.timeout(50) });
  } catch (err) {
    return err;
  } finally {
    await hanging.close();
  }
  throw new Error('the fetch did not time out');
}

describe('logged errors', () => {
  it('write a timed-out fetch as type, message and stack only', async () => {
    const err = await timedOutFetch();
    const { logger, lines } = collecting({ serializers: LOG_SERIALIZERS });
    logger.warn({ err }, 'lookup failed');
    logger.error(err as Error);
    for (const line of lines) {
      expect(Object.keys(line.err).sort()).toEqual(['message', 'stack', 'type']);
      expect(line.err).toMatchObject({ type: 'TimeoutError', message: expect.stringContaining('timeout') });
      expect(JSON.stringify(line)).not.toContain('INDEX_SIZE_ERR');
    }
    expect(lines).toHaveLength(2);
  });

  it('keep the cause chain in the message', async () => {
    const gone = await startLocalServer(() => undefined);
    await gone.close();
    let err: unknown;
    try {
      await fetch(gone.url);
    } catch (e) {
      err = e;
    }
    expect(serializeLogError(err)).toEqual({ type: 'TypeError', message: expect.stringMatching(/^fetch failed; cause: .*ECONNREFUSED/), stack: expect.any(String) });
    const nested = new Error('outer', { cause: new RangeError('middle', { cause: 'the root' }) });
    expect(serializeLogError(nested)).toMatchObject({ type: 'Error', message: 'outer; cause: middle; cause: the root' });
  });

  it('leave values that are not errors as they are', () => {
    expect(serializeLogError('plain text')).toBe('plain text');
    expect(serializeLogError(42)).toBe(42);
    expect(serializeLogError({ code: 7 })).toEqual({ code: 7 });
  });

  it('are written the same way by a logger handed in, its children old and new included', async () => {
    const err = await timedOutFetch();
    const { logger, lines } = collecting();
    const before = logger.child({ component: 'before' });
    useLogErrorSerializer(logger);
    const after = logger.child({ component: 'after' });
    logger.error({ err }, 'root');
    before.error({ err }, 'old child');
    after.error({ err }, 'new child');
    after.child({ component: 'grandchild' }).error(err as Error, 'grandchild');
    expect(lines.map((l) => l.msg)).toEqual(['root', 'old child', 'new child', 'grandchild']);
    for (const line of lines) expect(Object.keys(line.err).sort()).toEqual(['message', 'stack', 'type']);
  });
});
