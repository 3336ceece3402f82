/**
 * Writes a run's messages through the agent's memory hooks (memory-hooks.ts): the call's input once
 * the run starts, then each finished step's new response messages (persistence mode `step`) or all
 * of them at the end (`finish`). Saves are chained so they arrive in order; a failed save is logged
 * and never fails the generation. Nothing is written without memory, without a userId, or when the
 * call is `readOnly`.
 *
 * The run owns its writer and calls `close()` when it ends, however it ends: the last save is
 * `final` (nothing left debounced) and the run answers its client only once `close()` resolved, so
 * a finished call's messages are durable (a SIGKILL right after the last frame loses none).
 */
import type { ModelMessage, StepResult, ToolSet } from 'ai';
import type { Logger } from 'pino';
import type { PreparedCall } from './prepare-call.js';
import type { SaveMessagesArgs } from '../contract/memory-hooks.js';

export class MemoryWriter {
  private chain: Promise<void> = Promise.resolve();
  private savedResponse = 0;
  /** something was handed to the hooks (so a final save may have buffered messages to write) */
  private started = false;
  /** a final save was made: later saves (none expected) are written at once too, never debounced */
  private closed = false;

  private constructor(
    private readonly prepared: PreparedCall & { memory: NonNullable<PreparedCall['memory']> },
    private readonly logger: Logger,
  ) {}

  static for(prepared: PreparedCall, logger: Logger): MemoryWriter | undefined {
    if (!prepared.memory || prepared.options.memory.readOnly) return undefined;
    return new MemoryWriter(prepared as PreparedCall & { memory: NonNullable<PreparedCall['memory']> }, logger);
  }

  private save(messages: ModelMessage[], phase: SaveMessagesArgs['phase'], flags: { hasToolResult?: boolean; final?: boolean } = {}): void {
    if (this.closed) {
      if (messages.length === 0) return;
      flags = { ...flags, final: true };
    }
    if (messages.length === 0 && !(flags.final && this.started)) return;
    this.started = true;
    const { hooks, scope } = this.prepared.memory;
    const args: SaveMessagesArgs = { ...scope, messages, phase, persistence: this.prepared.options.memory.conversationPersistence };
    if (flags.hasToolResult) args.hasToolResult = true;
    if (flags.final) {
      args.final = true;
      this.closed = true;
    }
    this.chain = this.chain
      .then(() => hooks.saveMessages(args))
      .catch((err: unknown) => this.logger.error({ err, agentId: scope.agentId, conversationId: scope.conversationId }, 'saving messages to memory failed'));
  }

  input(): void {
    this.save(this.prepared.inputMessages, 'input');
  }

  step(step: StepResult<ToolSet>): void {
    if (this.prepared.options.memory.conversationPersistence.mode !== 'step') return;
    const all = step.response.messages as ModelMessage[];
    const fresh = all.slice(this.savedResponse);
    this.savedResponse = all.length;
    const hasToolResult = step.content.some((p) => p.type === 'tool-result' || p.type === 'tool-error');
    this.save(fresh, 'step', { hasToolResult });
  }

  /** The run finished: its remaining response messages are the final save. */
  finish(responseMessages: ModelMessage[]): void {
    if (this.prepared.options.memory.conversationPersistence.mode === 'step') {
      this.save(responseMessages.slice(this.savedResponse), 'step', { final: true });
      this.savedResponse = responseMessages.length;
      return;
    }
    this.save(responseMessages, 'finish', { final: true });
  }

  /**
   * The run ended (finished, failed or aborted): writes whatever is still buffered (a final save
   * when `finish` did not make one) and resolves once every save has settled.
   */
  close(): Promise<void> {
    this.save([], 'step', { final: true });
    this.closed = true;
    return this.chain;
  }
}
