/**
 * What the A2A server needs of the agents: a port it declares (module.ts takes it, routes.ts uses
 * it), wired to the agents module by the composition root (src/server-assembly.ts), so this domain
 * imports no other.
 */
export interface A2aAgents {
  /** the agent of this id, when one is registered */
  get(id: string): A2aAgent | undefined;
}

export interface A2aAgent {
  readonly id: string;
  /**
   * Prepares a run of `text` in conversation `conversationId` for `userId`; throws when the run cannot
   * start (a model that is not configured, say). `run()` then runs it in the background, recording to
   * the log; its clients read the log, so nothing is streamed to them from here.
   */
  prepare(req: { text: string; userId: string; conversationId: string; headers: Record<string, string>; signal: AbortSignal }): Promise<{ runId: string; run(): Promise<void> }>;
  /** aborts the run with `reason` when this node runs it; false when it runs on another node */
  cancel(runId: string, reason: string): boolean;
}
