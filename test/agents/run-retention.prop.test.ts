/**
 * Retention of agent runs over random histories (runs of three agents, interleaved, ending in each
 * terminal record, still working, or paused for a tool approval) and random policies (global, an
 * agent's own, an agent kept whole), on the in-memory and LevelDB stores: a pass never removes a
 * working or paused run, removes exactly the terminal runs the policy lets go (ranked newest first
 * per agent), leaves the agent history equal to a rebuild of the remaining log (entries, counts,
 * tombstones), archives every removed record as it was (and `eventloom import` gives them back), and
 * a removed run answers 404 naming its removal until its tombstone expires.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openLevelLog } from '../../src/log/level/level-log.js';
import { parseArchive, retentionStores } from '../helpers/retention-archive.js';
import type { EventLog, LogRecord, NewRecord } from '../../src/log/types.js';
import { ExecutionsIndex } from '../../src/workflows/executions-index.js';
import { runRetention } from '../../src/workflows/retention.js';
import { parseRetention } from '../../src/workflows/retention-policy.js';
import { AgentHistoryProjection } from '../../src/agents/history.js';
import { AgentRunRetention, runNotFound } from '../../src/agents/run-retention.js';
import { importCommand } from '../../src/cli/import.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eventloom-run-retention-'));
let dirs = 0;
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const AGENTS = ['a', 'b', 'c'] as const;
type AgentId = (typeof AGENTS)[number];
type End = 'finished' | 'failed' | 'aborted' | 'working' | 'paused';
const TERMINAL: readonly End[] = ['finished', 'failed', 'aborted'];
const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };

interface RunPlan {
  agent: AgentId;
  end: End;
}

/** A run's records as the agent-run machine accepts them (the first names the machine, as the host writes it). */
function recordsOf(i: number, p: RunPlan, at: number): NewRecord[] {
  const out: NewRecord[] = [
    { type: 'run.started', kind: 'agent-run@1', data: { runId: `r${i}`, agentId: p.agent, operationType: 'text', input: `in${i}`, options: {}, model: 'demo' }, at },
    { type: 'run.text-delta', data: { step: 0, text: 'x' }, at: at + 1 },
  ];
  if (p.end === 'finished') out.push({ type: 'run.finished', data: { steps: [], text: `out${i}`, usage, finishReason: 'stop' }, at: at + 2 });
  if (p.end === 'failed') out.push({ type: 'run.failed', data: { error: 'boom' }, at: at + 2 });
  if (p.end === 'aborted') out.push({ type: 'run.aborted', data: { reason: 'gone' }, at: at + 2 });
  if (p.end === 'paused') out.push({ type: 'run.approval-requested', data: { approvals: [{ approvalId: `ap${i}`, toolCallId: `c${i}`, toolName: 'tool', args: {} }], messages: [] }, at: at + 2 });
  return out;
}

/** Runs, and the order their records go in (each run's own order kept; starts in the order of `picks`). */
const scenario = fc
  .array(fc.record({ agent: fc.constantFrom(...AGENTS), end: fc.constantFrom<End>('finished', 'failed', 'aborted', 'working', 'paused') }), { minLength: 1, maxLength: 12 })
  .chain((plans) => {
    const total = plans.length * 3;
    return fc.array(fc.nat(plans.length - 1), { minLength: total, maxLength: total }).map((picks) => ({ plans, picks }));
  });

async function appendInterleaved(log: EventLog, plans: RunPlan[], picks: number[], at: number): Promise<number[]> {
  const queues = plans.map((p, i) => recordsOf(i, p, at));
  const startOrder: number[] = [];
  for (const pick of picks) {
    let r = pick;
    for (let n = 0; n < queues.length && queues[r].length === 0; n++) r = (r + 1) % queues.length;
    const record = queues[r].shift();
    if (!record) continue;
    if (record.type === 'run.started') startOrder.push(r);
    await log.append(`run:r${r}`, [record]);
  }
  for (const [r, q] of queues.entries()) {
    if (q.length === 0) continue;
    if (q[0].type === 'run.started') startOrder.push(r);
    await log.append(`run:r${r}`, q);
  }
  return startOrder;
}

const historyRows = (log: EventLog) => log.kv.range({ gte: 'agent-history/', lt: 'agent-history0' });

const portable = (records: LogRecord[]) => records.map(({ type, data, at, kind }) => ({ type, data, at, kind }));

const stores = retentionStores(root);

describe.each(stores)('agent-run retention on the %s store', (_name, openLog) => {
  it('removes only the terminal runs the policy lets go; the history equals a rebuild of what remains; the archive imports back', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.nat(3), fc.nat(2), fc.boolean(), fc.boolean(), async ({ plans, picks }, keepNewest, keepNewestB, byAge, archive) => {
        const log = await openLog();
        const index = new ExecutionsIndex(log);
        const history = new AgentHistoryProjection(log);
        await index.start();
        await history.start();
        try {
          const startedAt = Date.now();
          const startOrder = await appendInterleaved(log, plans, picks, startedAt);
          const before = new Map<string, LogRecord[]>();
          for (const { stream } of await log.listStreams('run:')) before.set(stream, await log.readStream(stream));
          const archiveDir = path.join(root, `archive-${++dirs}`);
          // a: the global policy; b: its own keepNewest; c: kept whole
          const settings = parseRetention(
            { ...(byAge ? { keepFor: '1s' } : { keepNewest }), archive: archive ? archiveDir : false, agents: { b: { keepNewest: keepNewestB }, c: false } },
            new Set(),
            new Set(AGENTS),
          )!;
          const runs = new AgentRunRetention(log, history, new Set(AGENTS));
          const now = startedAt + 5000;
          const result = await runRetention({ log, index, settings, workflowIds: [], runs, now: () => now });
          await history.waitFor(log.head());

          // the model: per agent, terminal runs ranked newest start first
          const expected = new Set<number>();
          for (const agent of AGENTS) {
            const limit = agent === 'c' ? Infinity : agent === 'b' ? keepNewestB : byAge ? 0 : keepNewest;
            const terminal = [...startOrder].reverse().filter((i) => plans[i].agent === agent && TERMINAL.includes(plans[i].end));
            for (const i of terminal.slice(limit)) expected.add(i);
          }
          const removed = new Set<number>();
          for (const i of plans.keys()) if ((await log.streamHead(`run:r${i}`)) === 0) removed.add(i);
          expect([...removed].sort()).toEqual([...expected].sort());
          expect(result.runs).toBe(expected.size);
          for (const i of removed) expect(TERMINAL).toContain(plans[i].end);

          // the history shows what remains, newest first, with counts to match
          for (const agent of AGENTS) {
            const page = await history.page(agent, 0, 100);
            const kept = [...startOrder].reverse().filter((i) => plans[i].agent === agent && !removed.has(i));
            expect(page.entries.map((e) => e.id)).toEqual(kept.map((i) => `r${i}`));
            expect(page.pagination.total).toBe(kept.length);
          }
          // a removed run answers 404 naming its removal
          for (const i of [...removed].slice(0, 2)) {
            expect((await runNotFound(history, `r${i}`, 'plain')).message).toBe(`Agent run r${i} not found (removed by retention at ${new Date(now).toISOString()})`);
          }
          // the archive holds every removed stream, record for record, and imports back as it was
          if (archive && removed.size > 0) {
            const archived = parseArchive(result.archive!);
            expect(archived).toEqual(new Map([...before].filter(([s]) => removed.has(Number(s.slice('run:r'.length))))));
            const target = path.join(root, `import-${++dirs}`);
            expect(await importCommand([result.archive!, '--data', target])).toBe(0);
            const restored = await openLevelLog(path.join(target, 'log'));
            try {
              for (const [stream, records] of archived) expect(portable(await restored.readStream(stream))).toEqual(portable(records));
            } finally {
              await restored.close();
            }
          }
          if (!archive) expect(result.archive).toBeUndefined();

          // the incremental history equals a rebuild of the remaining log, tombstones included
          const incremental = await historyRows(log);
          await history.rebuild();
          expect(await historyRows(log)).toEqual(incremental);
          if (log.integrity) expect((await log.integrity.check()).problems).toEqual([]);

          // once the tombstones are older than tombstonesFor, a pass expires them: a plain 404, the entries unchanged
          const later = await runRetention({ log, index, settings, workflowIds: [], runs, now: () => now + settings.tombstoneMs + 1 });
          await history.waitFor(log.head());
          expect(later.runs).toBe(0);
          expect(later.expired).toBe(removed.size);
          for (const i of removed) expect(await history.removedAt(`r${i}`)).toBeUndefined();
          expect(await log.listStreams('retention:')).toEqual([]);
          for (const agent of AGENTS) expect((await history.page(agent, 0, 100)).pagination.total).toBe(plans.filter((p, i) => p.agent === agent && !removed.has(i)).length);
        } finally {
          await history.stop();
          await index.stop();
          await log.close();
        }
      }),
      { numRuns: 12 },
    );
  });
});
