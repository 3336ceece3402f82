/**
 * The server-wide budget for output buffered for clients that do not read fast enough: SSE frames
 * queued by a sink or held by uWS, and WebSocket messages uWS holds. The per-client caps (8 MiB for
 * SSE, 4 MiB for WebSocket) bound one client; without a total, 600 stalled readers of one live
 * execution can hold 600 × 8 MiB. Before bytes are buffered past the budget, the slowest clients are
 * cut until they fit: the ones that have gone longest without the kernel taking any of their bytes
 * (a stalled client first), the largest backlog first among equals. A cut client loses only what was
 * still unsent: every SSE frame carries its cursor in `id:`, so the last complete frame it received
 * is where it resumes with `Last-Event-ID`.
 */

/** Something that holds output for one client. */
export interface BufferedOutput {
  /** bytes accounted to this client (see `OutputBudget.change`) */
  budgetBytes: number;
  /** when the client last made progress: its backlog started, or the kernel took some of it (ms) */
  budgetProgressAt: number;
  /** closes the client for the budget; must call `budget.release(this)` */
  cutForBudget(): void;
}

const DEFAULT_OUTPUT_BUDGET_BYTES = 64 * 1024 * 1024;
/** below this, one large frame could exceed the whole budget and every reader of it would be cut */
const MIN_OUTPUT_BUDGET_BYTES = 1024 * 1024;

export class OutputBudget {
  /** bytes buffered across all clients */
  bufferedBytes = 0;
  /** the highest `bufferedBytes` seen since start */
  peakBytes = 0;
  /** clients cut to keep within the budget */
  cuts = 0;
  /** clients holding bytes: the only candidates for a cut */
  private readonly holding = new Set<BufferedOutput>();

  constructor(readonly limitBytes: number = DEFAULT_OUTPUT_BUDGET_BYTES) {
    if (!Number.isSafeInteger(limitBytes) || limitBytes < MIN_OUTPUT_BUDGET_BYTES) {
      throw new Error(`server.maxBufferedOutputBytes must be an integer of at least ${MIN_OUTPUT_BUDGET_BYTES} bytes (1 MiB), got ${String(limitBytes)}`);
    }
  }

  /**
   * Makes room for `bytes` more on behalf of `output` by cutting the slowest clients; false when
   * `output` itself was cut (it must not buffer them then). Call before the bytes can be buffered.
   */
  admit(output: BufferedOutput | undefined, bytes: number): boolean {
    if (this.bufferedBytes + bytes <= this.limitBytes) return true;
    // over budget: rare, so a sort of the clients holding bytes is affordable here
    const victims = [...this.holding].sort((a, b) => a.budgetProgressAt - b.budgetProgressAt || b.budgetBytes - a.budgetBytes);
    for (const v of victims) {
      if (this.bufferedBytes + bytes <= this.limitBytes) break;
      this.cuts++;
      v.cutForBudget();
      this.release(v);
      if (v === output) return false;
    }
    // nobody else holds anything: the one frame is larger than what is left; the caller's own cap decides
    return true;
  }

  /** Cuts the slowest clients until the total is within the budget (after buffers grew unseen). */
  shed(): void {
    if (this.bufferedBytes > this.limitBytes) this.admit(undefined, 0);
  }

  /** `output` now holds `bytes` in all (its queue plus what the transport keeps for it). */
  set(output: BufferedOutput, bytes: number, now = performance.now()): void {
    const before = output.budgetBytes;
    if (bytes === before) return;
    if (before === 0) output.budgetProgressAt = now;
    output.budgetBytes = bytes;
    this.bufferedBytes += bytes - before;
    if (bytes === 0) this.holding.delete(output);
    else if (before === 0) this.holding.add(output);
    if (this.bufferedBytes > this.peakBytes) this.peakBytes = this.bufferedBytes;
  }

  /** The transport took some of `output`'s bytes: it is reading. */
  progressed(output: BufferedOutput, now = performance.now()): void {
    output.budgetProgressAt = now;
  }

  /** `output` is gone: nothing of it counts any more. */
  release(output: BufferedOutput): void {
    if (output.budgetBytes === 0) return;
    this.bufferedBytes -= output.budgetBytes;
    output.budgetBytes = 0;
    this.holding.delete(output);
  }

  /** Clients currently holding bytes (diagnostics, tests). */
  get holdingClients(): number {
    return this.holding.size;
  }
}
