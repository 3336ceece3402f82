/**
 * The agents as the protocol servers see them: what the A2A server asks of an agent (prepare a run of
 * a message, cancel it) and what the MCP server offers per agent (a text call). The composition root
 * hands these to the ports those servers declare; they match them by shape, so this domain imports
 * neither server.
 */
import type { SseSink } from '../contract/routes.js';
import { runStream } from '../../machines/agent-run.machine.js';
import { newRunId, type AgentRuns } from './agent-runs.js';
import { resolveCallOptions } from './call-options.js';
import { agentDescription } from './describe.js';
import { runText } from './ops-text.js';
import { runRawStream } from './ops-stream.js';
import type { TextOptions } from './request-schema.js';
import { AgentRun } from './run-session.js';

/** A sink that drops what it is given: background runs record to the log, and clients read the log. */
const DISCARD: SseSink = { closed: true, send: () => false, end: () => undefined, onClose: () => undefined };

interface CallOf {
  userId: string;
  conversationId?: string;
  headers: Record<string, string>;
  signal: AbortSignal;
}

const memoryOf = (call: CallOf) => ({ memory: { userId: call.userId, ...(call.conversationId !== undefined ? { conversationId: call.conversationId } : {}) } }) as TextOptions;

/** Agents for the A2A server: a task is a run recorded like any other (operation `stream`). */
export function a2aAgents(runs: AgentRuns) {
  return {
    get(id: string) {
      const agent = runs.registry.get(id);
      if (!agent) return undefined;
      return {
        id: agent.id,
        async prepare(req: { text: string } & CallOf) {
          const runId = newRunId();
          const prepared = await runs.prepare({ agent, input: req.text, options: resolveCallOptions(memoryOf(req), agent), headers: req.headers, runId, signal: req.signal });
          return { runId, run: () => runRawStream(runs, prepared, req.text, undefined, DISCARD) };
        },
        cancel(runId: string, reason: string): boolean {
          const session = runs.sessions.get(runStream(runId));
          if (!(session instanceof AgentRun)) return false;
          session.controller.abort(new DOMException(reason, 'AbortError'));
          return true;
        },
      };
    },
  };
}

/** Agents for the MCP server: each answers a prompt with a text call, in the caller's conversation. */
export function mcpAgents(runs: AgentRuns) {
  return runs.registry.list().map((agent) => ({
    id: agent.id,
    name: agent.name,
    description: agentDescription(agent),
    async ask(prompt: string, call: CallOf) {
      const prepared = await runs.prepare({ agent, input: prompt, options: resolveCallOptions(memoryOf(call), agent), headers: call.headers, runId: newRunId(), signal: call.signal });
      const r = await runText(runs, prepared, prompt, call.signal);
      return { text: r.text, runId: prepared.toolContext.runId, conversationId: prepared.callContext.conversationId };
    },
  }));
}
