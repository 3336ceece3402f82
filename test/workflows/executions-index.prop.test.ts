/**
 * The executions index: for random histories of executions (completed, suspended, resumed,
 * cancelled, failed, sub-workflows), the incrementally maintained index — stopped and restarted
 * from its checkpoint at random points — answers every query exactly like an index rebuilt from
 * scratch and like a brute-force filter over the folded streams.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { EventLog } from '../../src/log/types.js';
import { ExecutionsIndex, matches, type ExecutionsFilter } from '../../src/workflows/executions-index.js';
import { foldExecution } from '../../src/workflows/executions-view.js';
import { cancelExecution, resumeExecution, startExecution } from '../../src/workflows/commands.js';
import { echoWorkflow, orderApprovalWorkflow } from '../../examples/workflows/index.js';
import { failing, parent } from './fixtures.js';
import { makeEngine } from './helpers.js';

const op = fc.oneof(
  fc.record({ kind: fc.constant('echo' as const), user: fc.constantFrom(undefined, 'ann', 'bob'), team: fc.constantFrom(undefined, 'red', 'blue') }),
  fc.record({ kind: fc.constant('order' as const), user: fc.constantFrom(undefined, 'ann'), team: fc.constantFrom(undefined, 'red') }),
  fc.record({ kind: fc.constant('fail' as const) }),
  fc.record({ kind: fc.constant('parent' as const) }),
  fc.record({ kind: fc.constantFrom('resume' as const, 'cancel' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('restart-index' as const) }),
);

const FILTERS: ExecutionsFilter[] = [
  {},
  { status: 'completed' },
  { status: 'suspended' },
  { status: 'cancelled' },
  { status: 'error' },
  { workflowId: 'echo' },
  { workflowId: 'order-approval', status: 'suspended' },
  { userId: 'ann' },
  { metadata: { team: 'red' } },
  { workflowId: 'echo', metadata: { team: 'blue' } },
];

async function copyLog(from: EventLog): Promise<EventLog> {
  const to = createMemoryLog();
  for (const r of await from.readGlobal(1)) await to.append(r.stream, [{ type: r.type, data: r.data, at: r.at, ...(r.kind ? { kind: r.kind } : {}) }]);
  return to;
}

describe('executions index', () => {
  it('equals a rebuild from scratch and a brute-force filter, whatever the restarts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 4 }), fc.nat(8), async (ops, limit, offset) => {
        const engine = makeEngine([echoWorkflow, orderApprovalWorkflow, failing, parent]);
        let index = new ExecutionsIndex(engine.log);
        await index.start();
        const suspended: string[] = [];
        const all: string[] = [];
        for (const o of ops) {
          if (o.kind === 'restart-index') {
            void index.stop();
            index = new ExecutionsIndex(engine.log);
            await index.start();
            continue;
          }
          if (o.kind === 'resume' || o.kind === 'cancel') {
            if (suspended.length === 0) continue;
            const [id] = suspended.splice(o.pick % suspended.length, 1);
            if (o.kind === 'cancel') await cancelExecution(engine, 'order-approval', id, 'test');
            else await (await resumeExecution(engine, 'order-approval', id, { approved: true })).settled;
            continue;
          }
          const [wf, input] =
            o.kind === 'echo'
              ? ['echo', { text: 'x' }]
              : o.kind === 'order'
                ? ['order-approval', { items: [{ price: 101, qty: 1 }] }]
                : o.kind === 'fail'
                  ? ['failing', { n: 1 }]
                  : ['parent', { v: 1 }];
          const options = 'user' in o ? { userId: o.user, metadata: o.team ? { team: o.team } : {} } : {};
          const run = await startExecution(engine, wf, input, options);
          await run.settled;
          all.push(run.executionId);
          if (o.kind === 'order') suspended.push(run.executionId);
        }
        await index.waitFor(engine.log.head());
        const rebuilt = new ExecutionsIndex(await copyLog(engine.log));
        await rebuilt.start();
        const views = await Promise.all(all.map(async (id) => foldExecution(await engine.log.readStream(`exec:${id}`))));
        const docs = views.map((v) => ({ id: v.id, workflowId: v.workflowId, status: v.status, createdAt: Date.parse(v.createdAt), userId: v.userId, metadata: v.metadata }));
        docs.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
        for (const f of FILTERS) {
          const expected = docs.filter((d) => matches(d as never, f)).map((d) => d.id);
          const inc = await index.query(f, limit, offset);
          const fresh = await rebuilt.query(f, limit, offset);
          expect(inc.total).toBe(expected.length);
          expect(inc.docs.map((d) => d.id)).toEqual(expected.slice(offset, offset + limit));
          expect(fresh).toEqual(inc);
        }
        expect(await index.idsWithStatus('running')).toEqual([]);
      }),
      { numRuns: 40 },
    );
  });
});
