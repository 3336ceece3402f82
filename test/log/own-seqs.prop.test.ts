/**
 * The sequences a PostgreSQL node appended (src/log/pg/own-seqs.ts): whatever the commits (ascending,
 * some adjacent, others with other nodes' records between them), `has` answers as a set of every
 * sequence added would, for the recent ones it keeps.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OwnSequences } from '../../src/log/pg/own-seqs.js';

describe('the sequences a node appended', () => {
  it('are told apart from the other nodes’ sequences exactly, commit after commit', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ gap: fc.nat(3), count: fc.integer({ min: 1, max: 5 }) }), { maxLength: 60 }), (commits) => {
        const own = new OwnSequences();
        const mine = new Set<number>();
        let next = 1;
        for (const { gap, count } of commits) {
          next += gap; // other nodes' records in between
          own.add(next, next + count - 1);
          for (let s = next; s < next + count; s++) mine.add(s);
          next += count;
        }
        for (let s = 0; s <= next + 1; s++) expect(own.has(s)).toBe(mine.has(s));
      }),
    );
  });
});
