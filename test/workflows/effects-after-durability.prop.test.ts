/**
 * Effects after durability: a step's effect starts only once the records that lead to it (the previous
 * step's completion, its own start) are durable. The log here holds every append until the test makes
 * it durable, and a crash drops whatever is not yet durable; fast-check picks when appends become
 * durable, when the process crashes and restarts (a new engine on the durable records), and how long
 * steps take. Whatever it picks, no step runs before its start is durable, no step runs again once its
 * successor has started, and each step acts on the output its predecessor recorded.
 */
import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMemoryLog } from '../../src/log/memory/memory-log.js';
import type { AppendOptions, AppendResult, EventLog, LogRecord, NewRecord } from '../../src/log/types.js';
import { ActorHost } from '../../src/runtime/actor-host.js';
import { WorkflowEngine } from '../../src/workflows/engine.js';
import { andThen, createWorkflow } from '../../src/workflows/builder.js';
import { startExecution } from '../../src/workflows/commands.js';
import { executionStream } from '../../src/workflows/events.js';

/** A log whose appends wait for `flush`; after `crash` nothing it holds or is given becomes durable. */
class HeldLog {
  private held: Array<{ stream: string; records: NewRecord[]; options?: AppendOptions; resolve: (r: AppendResult) => void; reject: (e: Error) => void }> = [];
  private dead = false;
  /** record types per stream as they are durable now (read synchronously by the steps) */
  constructor(
    readonly durable: EventLog,
    readonly durableTypes: Map<string, Array<{ type: string; data: unknown }>>,
  ) {}

  get pending(): number {
    return this.held.length;
  }

  asLog(): EventLog {
    return new Proxy(this.durable, {
      get: (target, prop, receiver) => {
        if (prop === 'append') return (stream: string, records: NewRecord[], options?: AppendOptions) => this.append(stream, records, options);
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }

  private append(stream: string, records: NewRecord[], options?: AppendOptions): Promise<AppendResult> {
    if (this.dead) return new Promise(() => undefined);
    return new Promise((resolve, reject) => this.held.push({ stream, records, options, resolve, reject }));
  }

  /** Makes the oldest `n` held appends durable, in order. */
  async flush(n: number): Promise<void> {
    for (let i = 0; i < n && this.held.length > 0 && !this.dead; i++) {
      const a = this.held.shift()!;
      try {
        const res = await this.durable.append(a.stream, a.records, a.options);
        const list = this.durableTypes.get(a.stream) ?? [];
        for (const r of res.records) list.push({ type: r.type, data: r.data });
        this.durableTypes.set(a.stream, list);
        a.resolve(res);
      } catch (err) {
        a.reject(err as Error);
      }
    }
  }

  /** The process dies: what is held is lost, and this incarnation never writes again. */
  crash(): void {
    this.dead = true;
    this.held = [];
  }
}

interface EffectSeen {
  incarnation: number;
  stepId: string;
  input: unknown;
  /** the step's own start and its predecessor's completion were durable when it began */
  startDurable: boolean;
  inputRecorded: boolean;
}

const STEPS = ['a', 'b', 'c', 'd'];
const turn = () => new Promise((r) => setImmediate(r));

function scenario(durableTypes: Map<string, Array<{ type: string; data: unknown }>>, seen: EffectSeen[], current: { incarnation: number; outputs: number }) {
  const steps = STEPS.map((id, index) =>
    andThen({
      id,
      execute: async ({ data, executionId }: { data: unknown; executionId: string }) => {
        const list = durableTypes.get(executionStream(executionId)) ?? [];
        const started = list.filter((r) => r.type === 'step.started' && (r.data as { stepId: string }).stepId === id);
        const previous = index === 0 ? undefined : [...list].reverse().find((r) => r.type === 'step.completed' && (r.data as { stepId: string }).stepId === STEPS[index - 1]);
        seen.push({
          incarnation: current.incarnation,
          stepId: id,
          input: data,
          startDurable: started.length > 0,
          inputRecorded: index === 0 || (previous !== undefined && JSON.stringify((previous.data as { output: unknown }).output) === JSON.stringify(data)),
        });
        await turn();
        // another output each time it runs: an LLM call or a lookup would not repeat itself either
        return { step: id, n: current.outputs++ };
      },
    }),
  );
  return createWorkflow({ id: 'chain', name: 'Chain' }, ...(steps as [ReturnType<typeof andThen>]));
}

type Command = { kind: 'flush'; n: number } | { kind: 'turn' } | { kind: 'crash' };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 1, max: 3 }).map((n) => ({ kind: 'flush' as const, n })) },
  { weight: 3, arbitrary: fc.constant({ kind: 'turn' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'crash' as const }) },
);

describe('effects after durability', () => {
  it('never starts a step before its start and its input are durable, and never re-runs a step once its successor started, through random crashes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 40 }), async (commands) => {
        const durable = createMemoryLog();
        const durableTypes = new Map<string, Array<{ type: string; data: unknown }>>();
        const seen: EffectSeen[] = [];
        const current = { incarnation: 0, outputs: 0 };
        const def = scenario(durableTypes, seen, current);
        const boot = (held: HeldLog) => {
          const log = held.asLog();
          const engine = new WorkflowEngine({ log, host: new ActorHost(log), logger: pino({ level: 'silent' }), workflows: [def] });
          engine.fanout.start();
          return engine;
        };
        let held = new HeldLog(durable, durableTypes);
        let engine = boot(held);
        const starting = startExecution(engine, 'chain', { go: 1 });
        await turn();
        await held.flush(1);
        const run = await starting;
        const restart = async () => {
          held.crash();
          current.incarnation++;
          held = new HeldLog(durable, durableTypes);
          engine = boot(held);
          const records = await durable.readStream(executionStream(run.executionId));
          const terminal = records.some((r) => r.type === 'execution.completed' || r.type === 'execution.failed');
          if (!terminal) void engine.recover([run.executionId]);
          await turn();
        };
        for (const c of commands) {
          if (c.kind === 'flush') await held.flush(c.n);
          else if (c.kind === 'turn') await turn();
          else await restart();
        }
        // the last incarnation runs to the end, every append made durable as it comes
        for (let i = 0; i < 200; i++) {
          const types = (durableTypes.get(executionStream(run.executionId)) ?? []).map((r) => r.type);
          if (types.includes('execution.completed')) break;
          await held.flush(held.pending);
          await turn();
        }
        const records: LogRecord[] = await durable.readStream(executionStream(run.executionId));
        expect(records.map((r) => r.type)).toContain('execution.completed');
        for (const s of seen) {
          expect(s, `step ${s.stepId} began before its start was durable`).toMatchObject({ startDurable: true });
          expect(s, `step ${s.stepId} began on an input its predecessor had not recorded`).toMatchObject({ inputRecorded: true });
        }
        // once a step's successor began, the step never runs again
        for (let i = 0; i + 1 < STEPS.length; i++) {
          const successorAt = seen.findIndex((s) => s.stepId === STEPS[i + 1]);
          if (successorAt < 0) continue;
          expect(seen.slice(successorAt).filter((s) => s.stepId === STEPS[i])).toEqual([]);
        }
        // and the recorded chain is one story: each step's recorded input is its predecessor's recorded output
        const completed = records.filter((r) => r.type === 'step.completed').map((r) => r.data as { stepId: string; output: unknown; input?: unknown });
        expect(completed.map((c) => c.stepId)).toEqual(STEPS);
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
