/**
 * How `andAgent` steps run under `testWorkflow` and `runCommands`: as on the server, through real
 * agent runs (AgentRuns, recorded on the harness's log, each engine generation with its own), with
 * the agents the options give. Without any, each agent id the workflow names gets a stand-in that
 * answers with the offline demo model (text, or an object that fits the step's schema), so the steps
 * after an agent step are exercised instead of every run ending in error at it.
 */
import pino from 'pino';
import { createAgent, type Agent } from '../agents/define-agent.js';
import { createDemoModel } from '../agents/models/index.js';
import { AgentRegistry } from '../agents/registry.js';
import { AgentRuns } from '../agents/agent-runs.js';
import { createWorkflowAgentRunner, installSubAgentRunner } from '../agents/delegation.js';
import type { ActorHost } from '../runtime/actor-host.js';
import type { WorkflowAgentRunner } from '../contract/agent-bridge.js';
import { agentIdsNamed, checkAgentReferences } from '../workflows/references.js';
import type { WorkflowDefinition } from '../workflows/types.js';

const SILENT = pino({ level: 'silent' });

/** A demo-model agent standing in for `id`. */
function standIn(id: string): Agent {
  return createAgent({ id, name: id, instructions: `Stand-in for the agent '${id}' in a workflow test.`, model: createDemoModel() });
}

/**
 * The agents `andAgent` steps of `workflows` run with: `agents` (checked to cover every id the steps
 * name, as at server start-up), else a demo-model stand-in per named id; undefined when no step names one.
 */
export function testAgentRegistry(workflows: readonly WorkflowDefinition[], agents: readonly Agent[] | undefined): AgentRegistry | undefined {
  if (agents !== undefined) {
    checkAgentReferences(
      workflows,
      agents.map((a) => a.id),
    );
    return new AgentRegistry([...agents], process.env);
  }
  const named = agentIdsNamed(workflows);
  return named.length === 0 ? undefined : new AgentRegistry(named.map(standIn), {});
}

/** The runner of one engine generation: agent runs on its host (its log dies with it at a crash). */
export function agentRunnerOn(host: ActorHost, registry: AgentRegistry): WorkflowAgentRunner {
  const runs = new AgentRuns({ host, logger: SILENT, registry });
  installSubAgentRunner(runs);
  return createWorkflowAgentRunner(runs);
}
