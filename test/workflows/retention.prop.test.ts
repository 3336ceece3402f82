/**
 * Retention over random histories (completed, suspended, cancelled, failed executions, sub-workflows)
 * and random policies, on the in-memory and LevelDB stores: a pass never removes a running or
 * suspended execution, removes exactly what the policy lets go (with its sub-workflows), leaves the
 * executions index equal to a rebuild of the remaining log (no orphan row, no stale count), archives
 * every removed record as it was, and a removed id answers 404 naming its removal.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parseArchive, retentionStores } from '../helpers/retention-archive.js';
import type { EventLog, LogRecord } from '../../src/log/types.js';
import { ExecutionsIndex } from '../../src/workflows/executions-index.js';
import { readExecution, startExecution } from '../../src/workflows/commands.js';
import { runRetention } from '../../src/workflows/retention.js';
import { parseRetention } from '../../src/workflows/retention-policy.js';
import { echoWorkflow, orderApprovalWorkflow } from '../../examples/workflows/index.js';
import { failing, parent } from './fixtures.js';
import { makeEngine } from './helpers.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eventloom-retention-'));
let dirs = 0;
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const WORKFLOWS = [echoWorkflow, orderApprovalWorkflow, failing, parent];
const IDS = new Set(WORKFLOWS.map((w) => w.id));
const INPUT: Record<string, unknown> = { echo: { text: 'x' }, 'order-approval': { items: [{ price: 101, qty: 1 }] }, failing: { n: 1 }, parent: { v: 1 } };

const kvRows = (log: EventLog) => log.kv.range({ gte: 'wfx/', lt: 'wfx0' });

const stores = retentionStores(root);

/** Runs the executions one after another until each settles; their ids, once the index holds them all. */
async function runAll(engine: ReturnType<typeof makeEngine>, index: ExecutionsIndex, starts: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const wf of starts) {
    const run = await startExecution(engine, wf, INPUT[wf]);
    await run.settled;
    ids.push(run.executionId);
  }
  await index.waitFor(engine.log.head());
  return ids;
}

describe.each(stores)('retention on the %s store', (_name, openLog) => {
  it('removes only terminal executions the policy lets go, and the index equals a rebuild of what remains', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('echo', 'order-approval', 'failing', 'parent'), { minLength: 1, maxLength: 14 }),
        fc.option(fc.nat(4), { nil: undefined }),
        fc.boolean(),
        fc.boolean(),
        async (starts, keepNewest, byAge, archive) => {
          const log = await openLog();
          const engine = makeEngine(WORKFLOWS, { log });
          const index = new ExecutionsIndex(log);
          await index.start();
          try {
            const ids = await runAll(engine, index, starts);
            const before = new Map<string, LogRecord[]>();
            for (const { stream } of await log.listStreams('exec:')) before.set(stream, await log.readStream(stream));
            const statusOf = new Map((await index.summaries((await index.query({}, 1000, 0)).docs)).map((v) => [v.id, v.status]));
            const archiveDir = path.join(root, `archive-${++dirs}`);
            const settings = parseRetention(
              { ...(keepNewest !== undefined ? { keepNewest } : {}), ...(byAge || keepNewest === undefined ? { keepFor: '1s' } : {}), archive: archive ? archiveDir : false },
              IDS,
            )!;
            const result = await runRetention({ log, index, settings, workflowIds: IDS, now: () => Date.now() + 5000, release: (s) => engine.host.release(s) });
            await index.waitFor(log.head());

            const removedIds: string[] = [];
            for (const id of ids) if ((await log.streamHead(`exec:${id}`)) === 0) removedIds.push(id);
            // never a running or suspended one; by age (now is 5 s on, keepFor 1 s) every terminal one goes, else those beyond the newest keepNewest
            for (const id of removedIds) expect(['completed', 'error', 'cancelled']).toContain(statusOf.get(id));
            for (const id of ids) if (!['completed', 'error', 'cancelled'].includes(statusOf.get(id)!)) expect(await log.streamHead(`exec:${id}`)).toBeGreaterThan(0);
            const terminalPerWf = new Map<string, number>();
            for (const [i, id] of ids.entries()) if (['completed', 'error', 'cancelled'].includes(statusOf.get(id)!)) terminalPerWf.set(starts[i], (terminalPerWf.get(starts[i]) ?? 0) + 1);
            const expectedRemoved = [...terminalPerWf.values()].reduce((n, t) => n + (byAge || keepNewest === undefined ? t : Math.max(0, t - keepNewest)), 0);
            expect(removedIds.length).toBe(expectedRemoved);
            expect(result.executions).toBe(expectedRemoved);
            // sub-workflow executions go with their parent
            for (const id of removedIds) expect(await log.listStreams(`exec:${id}/`)).toEqual([]);
            // the archive holds every removed stream, record for record
            if (archive && expectedRemoved > 0) {
              const archived = parseArchive(result.archive!);
              const expected = [...before].filter(([s]) => removedIds.some((id) => s === `exec:${id}` || s.startsWith(`exec:${id}/`)));
              expect(new Map(expected)).toEqual(archived);
            }
            if (!archive) expect(result.archive).toBeUndefined();
            // a removed id answers 404 naming its removal
            for (const id of removedIds.slice(0, 2)) {
              const wf = starts[ids.indexOf(id)];
              await expect(readExecution(engine, wf, id)).rejects.toThrow(new RegExp(`^Execution ${id} not found \\(removed by retention at \\d{4}-`));
            }
            // the incremental index equals a rebuild of the remaining log
            const incremental = await kvRows(log);
            await index.rebuild();
            expect(await kvRows(log)).toEqual(incremental);
            if (log.integrity) expect((await log.integrity.check()).problems).toEqual([]);
          } finally {
            await index.stop();
            await engine.stop();
            await log.close();
          }
        },
      ),
      { numRuns: 12 },
    );
  });

  it('completes a pass cut short among its removals at the next pass, which records it done, and later passes read it no more', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('echo', 'order-approval', 'failing', 'parent'), { minLength: 1, maxLength: 10 }), fc.nat(30), async (starts, cut) => {
        const log = await openLog();
        const engine = makeEngine(WORKFLOWS, { log });
        const index = new ExecutionsIndex(log);
        await index.start();
        try {
          const ids = await runAll(engine, index, starts);
          const statusOf = new Map((await index.summaries((await index.query({}, 1000, 0)).docs)).map((v) => [v.id, v.status]));
          const terminal = ids.filter((id) => ['completed', 'error', 'cancelled'].includes(statusOf.get(id)!));
          const streamsBefore = (await log.listStreams('exec:')).map((s) => s.stream);
          const settings = parseRetention({ keepFor: '1s', archive: false }, IDS)!;
          const pass = () => runRetention({ log, index, settings, workflowIds: IDS, now: () => Date.now() + 5000, release: (s) => engine.host.release(s) });
          // the first pass stops (as a crash would) after the first `cut` of its streams are removed
          const removal = log.removal!;
          const removeStreams = removal.removeStreams;
          removal.removeStreams = async (streams, batch) => {
            removal.removeStreams = removeStreams;
            await removeStreams(streams.slice(0, cut), batch);
            throw new Error('cut short');
          };
          if (terminal.length > 0) await expect(pass()).rejects.toThrow('cut short');
          removal.removeStreams = removeStreams;
          await pass();
          await index.waitFor(log.head());
          const gone = (s: string) => terminal.some((id) => s === `exec:${id}` || s.startsWith(`exec:${id}/`));
          expect((await log.listStreams('exec:')).map((s) => s.stream)).toEqual(streamsBefore.filter((s) => !gone(s)));
          const passes = await log.listStreams('retention:');
          for (const { stream } of passes) expect((await log.readStream(stream)).map((r) => r.type)).toEqual(['retention.removed', 'retention.done']);
          // a later pass reads no pass stream again (each has its done record)
          const reads: string[] = [];
          const readStream = log.readStream.bind(log);
          log.readStream = (stream, from, to) => {
            reads.push(stream);
            return readStream(stream, from, to);
          };
          expect(await pass()).toMatchObject({ executions: 0, records: 0 });
          log.readStream = readStream;
          expect(reads.filter((s) => s.startsWith('retention:'))).toEqual([]);
          const incremental = await kvRows(log);
          await index.rebuild();
          expect(await kvRows(log)).toEqual(incremental);
          if (log.integrity) expect((await log.integrity.check()).problems).toEqual([]);
        } finally {
          await index.stop();
          await engine.stop();
          await log.close();
        }
      }),
      { numRuns: 10 },
    );
  });
});
