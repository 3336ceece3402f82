import { firstValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { liveRecords, records$ } from '../../src/log/committed.js';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import { until } from '../helpers/until.js';

describe('RxJS views of the log', () => {
  it('records$ replays from a sequence, then follows live commits', async () => {
    const log = createMemoryLog();
    for (let i = 0; i < 3; i++) await log.append('s', [{ type: 't', data: i }]);
    const got = firstValueFrom(records$(log, 1).pipe(take(4), toArray()));
    await log.append('s', [
      { type: 't', data: 3 },
      { type: 't', data: 4 },
    ]);
    expect((await got).map((r) => r.seq)).toEqual([2, 3, 4, 5]);
    await log.close();
  });

  it('liveRecords shares one subscription and shows only what commits after it starts', async () => {
    const log = createMemoryLog();
    await log.append('s', [{ type: 'old', data: 0 }]);
    const live = liveRecords(log);
    const a = firstValueFrom(live.pipe(take(2), toArray()));
    const b = firstValueFrom(live.pipe(take(2), toArray()));
    await log.append('s', [{ type: 'new', data: 1 }]);
    await log.append('u', [{ type: 'new', data: 2 }]);
    expect((await a).map((r) => r.seq)).toEqual([2, 3]);
    expect(await b).toEqual(await a);
    await log.close();
  });

  it('unsubscribing from records$ ends the log subscription', async () => {
    const log = createMemoryLog();
    const seen: number[] = [];
    const sub = records$(log).subscribe((r) => seen.push(r.seq));
    await log.append('s', [{ type: 't', data: 0 }]);
    await until(() => seen.length === 1, 'the first record');
    sub.unsubscribe();
    await log.append('s', [{ type: 't', data: 1 }]);
    // a later subscriber that got record 2 proves the unsubscribed one would have had it by now
    const probe: number[] = [];
    const p = records$(log).subscribe((r) => probe.push(r.seq));
    await until(() => probe.length === 2, 'the probe');
    p.unsubscribe();
    expect(seen).toEqual([1]);
    await log.close();
  });
});
