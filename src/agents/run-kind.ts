/**
 * The agent-run ActorKind for the actor host. The machine's `generate` action is the run's effect:
 * the host calls `runEffects` right after deciding the initial transition, and the effect runner
 * hands the actor to the in-process session registered for its stream (run-session.ts), which makes
 * the `ai` SDK call. Rehydrated actors never run effects (invariant 4): a run interrupted by a
 * restart is closed with `run.failed` at boot instead of being re-generated.
 */
import type { ActorKind, Actor } from '../runtime/actor-host.js';
import { agentRunMachine, AGENT_RUN_KIND, AGENT_RUN_STARTED, AGENT_RUN_VERSION } from '../../machines/agent-run.machine.js';

export type AgentRunLogic = typeof agentRunMachine;
export type AgentRunActor = Actor<AgentRunLogic>;

/** What the effect runner starts: one per live run, registered under its stream id. */
export interface RunEffect {
  begin(actor: AgentRunActor): void;
}

export function createAgentRunKind(sessions: Map<string, RunEffect>): ActorKind<AgentRunLogic> {
  return {
    kind: AGENT_RUN_KIND,
    version: AGENT_RUN_VERSION,
    logic: agentRunMachine,
    createdType: AGENT_RUN_STARTED,
    runEffects(actor, _event, actions) {
      for (const a of actions) {
        if (a.type === 'generate') sessions.get(actor.stream)?.begin(actor);
      }
    },
    isTerminal: (snapshot) => snapshot.status === 'done',
    // a run waiting for approvals lives in the log: after one decision of several, the next may be given on any node
    isParked: (snapshot) => snapshot.value === 'awaitingApproval',
  };
}
