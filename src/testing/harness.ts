/**
 * Runs workflow commands against the real engine on an in-memory log, the way the server would:
 * the commands are the ones behind the HTTP routes (src/workflows/commands.ts), a crash kills the
 * engine generation (its log handle is fenced, so in-flight steps can no longer write) and a new
 * engine on the same log recovers the running executions, as on boot. Every append the log
 * acknowledged is remembered, to check it survives the crash.
 */
import pino from 'pino';
import { createMemoryLog } from '../log/memory/memory-log.js';
import { type AppendOptions, type AppendResult, type EventLog, type LogRecord, type NewRecord, type SubscribeOptions, type Subscription } from '../log/types.js';
import { ActorHost } from '../runtime/actor-host.js';
import type { Clock } from '../kernel/clock.js';
import { AppError } from '../errors.js';
import { WorkflowEngine } from '../workflows/engine.js';
import { cancelExecution, replayExecution, resumeExecution, startExecution, suspendExecution } from '../workflows/commands.js';
import { EXECUTION_STREAM_PREFIX } from '../workflows/events.js';
import { foldExecution } from '../workflows/executions-view.js';
import type { WorkflowAgentRunner } from '../contract/agent-bridge.js';
import type { AgentRegistry } from '../agents/registry.js';
import { agentRunnerOn } from './agents.js';
import type { WorkflowDefinition } from '../workflows/types.js';
import type { ExecutionStatus } from '../../machines/workflow-execution.machine.js';
import { INVARIANTS } from './invariant-names.js';

export interface ExecutionHistory {
  executionId: string;
  workflowId: string;
  /** the execution's records, as logged */
  records: LogRecord[];
  status: ExecutionStatus;
  /** the result of a completed execution */
  result?: unknown;
  /** set on an execution started by `replayFrom` */
  replayOf?: { executionId: string; stepId: string };
  /** sub-workflow executions are included, with their parent */
  parentExecutionId?: string;
}

export interface CommandLogEntry {
  /** the command as it prints, e.g. `resume({"approved":true})` */
  command: string;
  /** `rejected`: the command was refused as the API would refuse it (a 4xx), e.g. resuming a finished run */
  outcome: 'ok' | 'rejected';
  message?: string;
}

/** What user invariants see: every execution of the run, and what each command did. */
export interface WorkflowHistory {
  executions: ExecutionHistory[];
  commands: CommandLogEntry[];
  crashes: number;
}

export class InvariantViolation extends Error {
  constructor(
    readonly invariant: string,
    message: string,
  ) {
    super(`${invariant}: ${message}`);
    this.name = 'InvariantViolation';
  }
}

export interface HarnessOptions {
  /** the workflow under test and any other the engine must know */
  workflows: readonly WorkflowDefinition[];
  agentRunner?: WorkflowAgentRunner;
  /** the agents andAgent steps run with when no agentRunner is given (agents.ts) */
  agents?: AgentRegistry;
  /** how long `settle` waits for running executions (real time) */
  settleTimeoutMs: number;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * What a killed process gets from its log: nothing, ever. Code of a dead generation that still runs
 * (a step in flight) waits forever instead of seeing errors a real crash would never let it see.
 */
const NEVER = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** An EventLog handle that dies with its engine generation: afterwards nothing reads or writes through it. */
class FencedLog implements EventLog {
  private dead = false;
  private readonly subscriptions = new Set<Subscription>();

  constructor(
    private readonly inner: EventLog,
    private readonly onAck: (records: LogRecord[]) => void,
  ) {}

  kill(): void {
    this.dead = true;
    for (const s of this.subscriptions) s.unsubscribe();
    this.subscriptions.clear();
  }

  async append(stream: string, records: NewRecord[], options?: AppendOptions): Promise<AppendResult> {
    if (this.dead) return NEVER();
    const res = await this.inner.append(stream, records, options);
    // a durable log acknowledges after an fsync, on a later turn of the event loop: so does this one,
    // which gives a crash a place to land between any two appends of a run
    await turn();
    // a process killed between the commit and its acknowledgement never saw it
    if (this.dead) return NEVER();
    this.onAck(res.records);
    return res;
  }
  async readStream(stream: string, from?: number, to?: number): Promise<LogRecord[]> {
    return this.dead ? NEVER() : this.inner.readStream(stream, from, to);
  }
  async readGlobal(fromSeq: number, toSeq?: number, limit?: number): Promise<LogRecord[]> {
    return this.dead ? NEVER() : this.inner.readGlobal(fromSeq, toSeq, limit);
  }
  async streamHead(stream: string): Promise<number> {
    return this.dead ? NEVER() : this.inner.streamHead(stream);
  }
  head(): number {
    return this.inner.head();
  }
  subscribe(afterSeq: number, onRecord: (record: LogRecord) => void, options?: SubscribeOptions): Subscription {
    if (this.dead) return { unsubscribe: () => undefined };
    const sub = this.inner.subscribe(afterSeq, onRecord, options);
    this.subscriptions.add(sub);
    return { unsubscribe: () => (sub.unsubscribe(), this.subscriptions.delete(sub)) };
  }
  async listStreams(prefix: string) {
    return this.dead ? NEVER<Array<{ stream: string; head: number }>>() : this.inner.listStreams(prefix);
  }
  getCheckpoint(name: string) {
    return this.inner.getCheckpoint(name);
  }
  setCheckpoint(name: string, seq: number) {
    return this.inner.setCheckpoint(name, seq);
  }
  get kv() {
    return this.inner.kv;
  }
  async close(): Promise<void> {
    this.kill();
  }
}

interface Generation {
  fence: FencedLog;
  engine: WorkflowEngine;
}

interface Started {
  executionId: string;
  workflowId: string;
  replayOf?: { executionId: string; stepId: string };
}

let harnessCount = 0;

const SILENT = pino({ level: 'silent' });

export class Harness {
  readonly log: EventLog;
  readonly started: Started[] = [];
  readonly commandLog: CommandLogEntry[] = [];
  crashes = 0;
  private gen: Generation;
  private readonly acked = new Map<string, string>();
  /** commands whose acknowledgement is still on its way (execute): awaited by settle */
  private readonly pending: Promise<void>[] = [];
  private readonly def: WorkflowDefinition;
  private readonly idPrefix = `t${++harnessCount}`;
  private ids = 0;
  private time = Date.UTC(2025, 0, 1);

  constructor(private readonly options: HarnessOptions) {
    this.def = options.workflows[0];
    this.log = createMemoryLog({ clock: () => this.time });
    this.gen = this.generation();
  }

  private generation(): Generation {
    const fence = new FencedLog(this.log, (records) => {
      for (const r of records) this.acked.set(`${r.stream}#${r.streamSeq}`, JSON.stringify(r));
    });
    const host = new ActorHost(fence, { clock: () => ++this.time });
    const { agents } = this.options;
    const agentRunner = this.options.agentRunner ?? (agents ? agentRunnerOn(host, agents) : undefined);
    // durable waits on the harness's virtual time: a timer fires on the next turn, moving the time to
    // its due time, so a sleep of a day costs a test nothing and its records say what they would
    const clock: Clock = {
      now: () => this.time,
      setTimer: (fn, ms) => {
        const at = this.time + ms;
        const t = setTimeout(() => {
          this.time = Math.max(this.time, at);
          fn();
        }, 0);
        return { cancel: () => clearTimeout(t) };
      },
    };
    const engine = new WorkflowEngine({ log: fence, host, logger: SILENT, workflows: this.options.workflows, agentRunner: () => agentRunner, newId: () => `${this.idPrefix}-e${++this.ids}`, clock });
    engine.fanout.start();
    return { fence, engine };
  }

  get engine(): WorkflowEngine {
    return this.gen.engine;
  }

  private get target(): Started | undefined {
    return this.started[this.started.length - 1];
  }

  /** Runs a command the way the API would; a refusal with a 4xx is recorded, anything else is thrown. */
  private async attempt(command: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
      this.commandLog.push({ command, outcome: 'ok' });
    } catch (err) {
      if (err instanceof AppError && err.status < 500) {
        this.commandLog.push({ command, outcome: 'rejected', message: err.message });
        return;
      }
      throw err;
    }
  }

  private swallow(p: Promise<unknown>): void {
    // a run's settling record is awaited by the API, not here; a crash rejects these waits
    p.catch(() => undefined);
  }

  /**
   * Starts an execution without waiting for its first record's acknowledgement, so the commands
   * that follow can land anywhere in the run (`wait` moves the point).
   */
  async execute(input: unknown): Promise<void> {
    const before = this.ids;
    const started = startExecution(this.engine, this.def.id, input);
    if (this.ids !== before) this.started.push({ executionId: `${this.idPrefix}-e${this.ids}`, workflowId: this.def.id });
    const entry: CommandLogEntry = { command: 'execute', outcome: 'ok' };
    this.commandLog.push(entry);
    const acknowledged = started.then(
      (run) => this.swallow(run.settled),
      (err) => {
        if (err instanceof AppError && err.status < 500) Object.assign(entry, { outcome: 'rejected', message: err.message });
        else throw err;
      },
    );
    acknowledged.catch(() => undefined); // observed by settle; never an unhandled rejection meanwhile
    this.pending.push(acknowledged);
  }

  /** Lets the runs go on: `turns` turns of the event loop, then `ticks` microtask hops. */
  async wait(turns: number, ticks: number): Promise<void> {
    for (let i = 0; i < turns; i++) await turn();
    for (let i = 0; i < ticks; i++) await Promise.resolve();
  }

  async suspend(reason: string): Promise<void> {
    const t = this.target;
    if (t) await this.attempt('suspend', () => suspendExecution(this.engine, t.workflowId, t.executionId, reason));
  }

  async resume(resumeData: unknown): Promise<void> {
    const t = this.target;
    if (t) await this.attempt('resume', async () => this.swallow((await resumeExecution(this.engine, t.workflowId, t.executionId, resumeData)).settled));
  }

  async cancel(reason: string): Promise<void> {
    const t = this.target;
    if (t) await this.attempt('cancel', () => cancelExecution(this.engine, t.workflowId, t.executionId, reason));
  }

  async replayFrom(stepId: string): Promise<void> {
    const t = this.target;
    if (!t) return;
    await this.attempt('replayFrom', async () => {
      const run = await replayExecution(this.engine, t.workflowId, t.executionId, { stepId });
      this.swallow(run.settled);
      this.started.push({ executionId: run.executionId, workflowId: t.workflowId, replayOf: { executionId: t.executionId, stepId } });
    });
  }

  /** Kills this engine generation and boots a new one on the same log, which recovers the running executions. */
  async crash(): Promise<void> {
    this.gen.fence.kill();
    this.pending.length = 0; // acknowledgements the dead generation was waiting for never come
    this.gen.engine.fanout.stop();
    this.crashes++;
    for (const [key, json] of this.acked) {
      const [stream, seq] = [key.slice(0, key.lastIndexOf('#')), Number(key.slice(key.lastIndexOf('#') + 1))];
      const [found] = await this.log.readStream(stream, seq, seq);
      if (!found || JSON.stringify(found) !== json)
        throw new InvariantViolation(INVARIANTS.acknowledged, `${key} was acknowledged but after the crash reads ${found ? JSON.stringify(found) : 'nothing'}`);
    }
    this.gen = this.generation();
    const running: string[] = [];
    for (const { stream } of await this.log.listStreams(EXECUTION_STREAM_PREFIX)) {
      if (stream.indexOf('/', EXECUTION_STREAM_PREFIX.length) >= 0) continue; // children resume through their parent step
      if (foldExecution(await this.log.readStream(stream)).status === 'running') running.push(stream.slice(EXECUTION_STREAM_PREFIX.length));
    }
    await this.engine.recover(running);
    this.commandLog.push({ command: 'crash', outcome: 'ok' });
  }

  /** Waits until no execution is running; a run still running after `settleTimeoutMs` is a failure. */
  async settle(): Promise<void> {
    for (const p of this.pending.splice(0)) await p;
    const deadline = Date.now() + this.options.settleTimeoutMs;
    for (let i = 0; ; i++) {
      if (!(await this.anyRunning())) return;
      if (Date.now() > deadline) {
        throw new InvariantViolation(INVARIANTS.settle, `an execution is still running after ${this.options.settleTimeoutMs} ms (a step that never finishes, or raise settleTimeoutMs)`);
      }
      // event-loop turns first; once steps wait on timers, stop spinning
      await (i < 1000 ? turn() : new Promise((r) => setTimeout(r, 1)));
    }
  }

  private async anyRunning(): Promise<boolean> {
    for (const { stream } of await this.log.listStreams(EXECUTION_STREAM_PREFIX)) {
      const records = await this.log.readStream(stream);
      if (records.length > 0 && foldExecution(records).status === 'running') return true;
    }
    return false;
  }

  /** Every execution in the log (sub-workflows included), in the order they started. */
  async history(): Promise<WorkflowHistory> {
    const executions: ExecutionHistory[] = [];
    const byId = new Map(this.started.map((s) => [s.executionId, s]));
    const streams = await this.log.listStreams(EXECUTION_STREAM_PREFIX);
    const all = await Promise.all(streams.map((s) => this.log.readStream(s.stream)));
    all.sort((a, b) => a[0].seq - b[0].seq);
    for (const records of all) {
      const view = foldExecution(records);
      const started = byId.get(view.id);
      executions.push({
        executionId: view.id,
        workflowId: view.workflowId,
        records,
        status: view.status,
        ...(view.status === 'completed' ? { result: view.output } : {}),
        ...(started?.replayOf ? { replayOf: started.replayOf } : {}),
        ...(view.parentExecutionId ? { parentExecutionId: view.parentExecutionId } : {}),
      });
    }
    return { executions, commands: [...this.commandLog], crashes: this.crashes };
  }

  /** Stops the current generation (its in-flight steps can no longer write). */
  async dispose(): Promise<void> {
    this.gen.fence.kill();
    this.gen.engine.fanout.stop();
    await this.log.close();
  }
}
