import { describe, expect, it } from 'vitest';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { checkLogIntegrity } from '../../src/log/integrity.js';
import { runEventLogContract } from '../contract/event-log.contract.js';
import { until } from '../helpers/until.js';

runEventLogContract('memory', (clock) => createMemoryLog({ clock }));

describe('memory log', () => {
  it('passes the integrity check through the public API', async () => {
    const log = createMemoryLog();
    await Promise.all(Array.from({ length: 30 }, (_, i) => log.append(`s${i % 4}`, [{ type: 't', data: i }])));
    expect(await checkLogIntegrity(log)).toEqual({ ok: true, records: 30, problems: [] });
    await log.close();
  });

  it('stops a subscriber whose callback throws, reports it, and keeps serving the others', async () => {
    const errors: unknown[] = [];
    const log = createMemoryLog({ onSubscriberError: (err) => errors.push(err) });
    const good: number[] = [];
    const bad: number[] = [];
    log.subscribe(0, (r) => {
      bad.push(r.seq);
      if (r.seq === 2) throw new Error('projection bug');
    });
    log.subscribe(0, (r) => good.push(r.seq));
    for (let i = 0; i < 4; i++) await log.append('s', [{ type: 't', data: i }]);
    await until(() => good.length === 4);
    expect(bad).toEqual([1, 2]);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('projection bug');
    await log.close();
  });
});
