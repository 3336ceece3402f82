/**
 * Two nodes on one PostgreSQL log, appending at once, one of them followed by subscribers that need
 * only some of the other node's records (`RecordInterest`): each subscriber gets, in order and once,
 * every record its own node appended and every record of the other node it asked for; the node reads
 * back no more than what its subscribers asked for together, and none when they ask for none.
 * Stream and type names carry `LIKE`'s `_` and `%` and a JSON quote, so a prefix is matched literally.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openPgLog, type PgEventLog } from '../../src/log/pg/pg-log.js';
import type { LogRecord, RecordInterest } from '../../src/log/types.js';
import { usePostgres } from '../helpers/postgres.js';

const cluster = usePostgres();

const STREAMS = ['p_a:1', 'pXa:2', 'p%b:3', 'q:4', 'q:5'];
const TYPES = ['t_one', 'tXone', 'u.two', 'u"q'];
const STREAM_PREFIXES = ['p_', 'p%', 'q:', 'pX'];
const TYPE_PREFIXES = ['t_', 'u.', 'u"', 'tX'];

const filterArb: fc.Arbitrary<RecordInterest> = fc.oneof(
  fc.constant<RecordInterest>('own'),
  fc.constant<RecordInterest>('all'),
  fc
    .record({
      streams: fc.subarray(STREAMS, { maxLength: 2 }),
      streamPrefixes: fc.subarray(STREAM_PREFIXES, { maxLength: 2 }),
      typePrefixes: fc.subarray(TYPE_PREFIXES, { maxLength: 2 }),
    })
    .map((f): RecordInterest => ({ streams: () => f.streams, streamPrefixes: f.streamPrefixes, typePrefixes: f.typePrefixes })),
);

const appendsArb = fc.array(fc.record({ stream: fc.constantFrom(...STREAMS), types: fc.array(fc.constantFrom(...TYPES), { minLength: 1, maxLength: 3 }) }), { minLength: 5, maxLength: 40 });

function matches(interest: RecordInterest, r: LogRecord): boolean {
  if (interest === 'all') return true;
  if (interest === 'own') return false;
  const f = interest;
  return [...(f.streams?.() ?? [])].includes(r.stream) || (f.streamPrefixes ?? []).some((p) => r.stream.startsWith(p)) || (f.typePrefixes ?? []).some((p) => r.type.startsWith(p));
}

async function appendAll(log: PgEventLog, appends: Array<{ stream: string; types: string[] }>, tag: string): Promise<void> {
  // several appends in flight at once: commits of the two nodes interleave, and a NOTIFY may overtake its commit's reply
  await Promise.all(
    appends.map((a, i) =>
      log.append(
        a.stream,
        a.types.map((type) => ({ type, data: { tag, i } })),
      ),
    ),
  );
}

describe('postgres log: what a node reads of other nodes records', () => {
  it("gives each subscriber its own node's records and the other node's it asked for, in order, and reads no more than they asked for", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(filterArb, { minLength: 1, maxLength: 3 }), appendsArb, appendsArb, async (interests, fromA, fromB) => {
        const url = await cluster().createDatabase();
        const a = await openPgLog(url, { scope: 'a', pollMs: 50 });
        const b = await openPgLog(url, { scope: 'b', pollMs: 50 });
        try {
          const got = interests.map(() => [] as LogRecord[]);
          const passed = interests.map(() => 0);
          const subs = interests.map((interest, i) => b.subscribe(0, (r) => got[i].push(r), { interest, passed: (seq) => (passed[i] = Math.max(passed[i], seq)) }));
          // the subscribers are live (caught up with the empty log) before anything is appended
          await new Promise((r) => setTimeout(r, 20));
          await Promise.all([appendAll(a, fromA, 'a'), appendAll(b, fromB, 'b')]);
          const head = await b.shared.catchUp();
          const all = await b.readGlobal(1, head);
          const mine = new Set(all.filter((r) => (r.data as { tag: string }).tag === 'b').map((r) => r.seq));
          for (const [i, interest] of interests.entries()) {
            const seqs = got[i].map((r) => r.seq);
            // in order, each once
            expect(seqs).toEqual([...new Set(seqs)].sort((x, y) => x - y));
            const wanted = all.filter((r) => mine.has(r.seq) || matches(interest, r)).map((r) => r.seq);
            const have = new Set(seqs);
            expect(wanted.filter((s) => !have.has(s))).toEqual([]);
            // what it was given is the log's record, not a copy that differs
            for (const r of got[i]) expect(r).toMatchObject({ seq: r.seq, stream: all.find((x) => x.seq === r.seq)!.stream, type: all.find((x) => x.seq === r.seq)!.type });
            // its position reached the head, through records or past them
            expect(Math.max(passed[i], seqs[seqs.length - 1] ?? 0)).toBe(head);
          }
          const stats = b.shared.readBack();
          if (interests.includes('all')) return;
          // with nobody needing every record, each subscriber got nothing of the other node's beyond what it asked for
          for (const [i, interest] of interests.entries()) expect(got[i].filter((r) => !mine.has(r.seq) && !matches(interest, r)).map((r) => r.seq)).toEqual([]);
          const asked = all.filter((r) => !mine.has(r.seq) && interests.some((i) => matches(i, r)));
          const couldRead = all.filter((r) => interests.some((i) => matches(i, r)));
          expect(stats.records).toBeLessThanOrEqual(couldRead.length);
          if (interests.every((i) => i === 'own')) expect(stats.reads).toBe(0);
          else expect(stats.records).toBeGreaterThanOrEqual(asked.length);
          for (const s of subs) s.unsubscribe();
        } finally {
          await a.close();
          await b.close();
        }
      }),
      { numRuns: 12 },
    );
  }, 180_000);

  it("matches a filter's prefixes literally: LIKE's _ and % and a quote in a type are no wildcards", async () => {
    const url = await cluster().createDatabase();
    const a = await openPgLog(url, { scope: 'a', pollMs: 50 });
    const b = await openPgLog(url, { scope: 'b', pollMs: 50 });
    try {
      const got: string[] = [];
      b.subscribe(0, (r) => got.push(`${r.stream} ${r.type}`), { interest: { streamPrefixes: ['p_'], typePrefixes: ['u"'] } });
      await new Promise((r) => setTimeout(r, 20));
      await a.append('pXa:2', [{ type: 'tXone', data: {} }]);
      await a.append('p_a:1', [{ type: 'tXone', data: {} }]);
      await a.append('q:4', [{ type: 'uXq', data: {} }]);
      await a.append('q:5', [{ type: 'u"q', data: {} }]);
      await a.append('p%b:3', [{ type: 't_one', data: {} }]);
      await b.shared.catchUp();
      expect(got).toEqual(['p_a:1 tXone', 'q:5 u"q']);
      expect(b.shared.readBack().records).toBe(2);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
