/**
 * The end of an agent stream (src/agents/stream-end.ts): frames pass at once until the first
 * terminal frame; from then on every frame waits for `release()` and is written in order after it.
 */
import { describe, expect, it } from 'vitest';
import { STREAM_OBJECT_TERMINAL_TYPES, STREAM_TERMINAL_TYPES, streamEnd } from '../../src/agents/stream-end.js';

describe('streamEnd', () => {
  it('writes content frames at once and holds the terminal frame and everything after it until release', () => {
    const written: string[] = [];
    const end = streamEnd((p) => written.push(p.type as string), STREAM_TERMINAL_TYPES);
    end.emit({ type: 'start' });
    end.emit({ type: 'text-delta' });
    expect(written).toEqual(['start', 'text-delta']);
    end.emit({ type: 'finish' });
    end.emit({ type: 'tool-result' });
    end.emit({ type: 'error' });
    expect(written).toEqual(['start', 'text-delta']);
    end.release();
    expect(written).toEqual(['start', 'text-delta', 'finish', 'tool-result', 'error']);
    end.emit({ type: 'late' });
    expect(written.at(-1)).toBe('late');
  });

  it('holds the object frame of stream-object, and an error or abort of either kind', () => {
    for (const [types, terminal] of [
      [STREAM_OBJECT_TERMINAL_TYPES, 'object'],
      [STREAM_OBJECT_TERMINAL_TYPES, 'abort'],
      [STREAM_TERMINAL_TYPES, 'abort'],
      [STREAM_TERMINAL_TYPES, 'error'],
    ] as const) {
      const written: string[] = [];
      const end = streamEnd((p) => written.push(p.type as string), types);
      end.emit({ type: 'partial-object' });
      end.emit({ type: terminal });
      expect(written).toEqual(['partial-object']);
      end.release();
      expect(written).toEqual(['partial-object', terminal]);
    }
  });

  it('releases nothing when nothing was held', () => {
    const written: string[] = [];
    const end = streamEnd((p) => written.push(p.type as string), STREAM_TERMINAL_TYPES);
    end.release();
    expect(written).toEqual([]);
  });
});
