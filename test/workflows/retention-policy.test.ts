/**
 * The `retention` section of the config: durations and counts are read as documented, and each
 * mistake is refused with an error naming its path in the config.
 */
import { describe, expect, it } from 'vitest';
import { agentPolicyOf, parseRetention, policyOf } from '../../src/workflows/retention-policy.js';

const IDS = new Set(['echo', 'checkout']);

describe('retention config', () => {
  it('reads durations, counts, per-workflow policies and the defaults', () => {
    const s = parseRetention({ keepFor: '30d', keepNewest: 5, archive: './a', workflows: { echo: { keepFor: 90_000 }, checkout: false } }, IDS)!;
    expect(s).toMatchObject({ global: { keepForMs: 30 * 86_400_000, keepNewest: 5 }, archive: './a', tombstoneMs: 7 * 86_400_000, everyMs: 3_600_000, batch: 1000, maxPerPass: 1000 });
    expect(policyOf(s, 'echo')).toEqual({ keepForMs: 90_000 });
    expect(policyOf(s, 'checkout')).toBeUndefined();
    expect(policyOf(s, 'other')).toEqual({ keepForMs: 30 * 86_400_000, keepNewest: 5 });
    expect(parseRetention(undefined, IDS)).toBeUndefined();
    expect(parseRetention({ archive: false, tombstonesFor: '12h', every: '15m' }, IDS)).toMatchObject({ archive: false, tombstoneMs: 43_200_000, everyMs: 900_000 });
  });

  it('refuses each mistake naming its path', () => {
    const bad: Array<[unknown, string]> = [
      [{ keepFor: '30d' }, 'config.retention.archive: name a directory'],
      [{ keepFor: '3 weeks', archive: false }, 'config.retention.keepFor: a duration is'],
      [{ keepFor: 0, archive: false }, 'config.retention.keepFor: a duration in ms must be a positive integer'],
      [{ keepNewest: -1, archive: false }, 'config.retention.keepNewest: a count of executions'],
      [{ archive: 3 }, 'config.retention.archive: a directory path, or false'],
      [{ archive: false, keep: 1 }, "config.retention: unknown key 'keep'"],
      [{ archive: false, workflows: { nope: { keepNewest: 1 } } }, "config.retention.workflows.nope: no workflow 'nope' is configured"],
      [{ archive: false, workflows: { echo: {} } }, 'config.retention.workflows.echo: set keepFor and/or keepNewest'],
      [{ archive: false, workflows: { echo: { keepFor: '1d', max: 2 } } }, "config.retention.workflows.echo: unknown key 'max'"],
      [{ archive: false, batch: 0 }, 'config.retention.batch: a positive integer'],
      [[], 'config.retention: an object'],
    ];
    for (const [section, message] of bad) expect(() => parseRetention(section, IDS), JSON.stringify(section)).toThrow(message);
  });

  it("reads agents' own policies: an agent without one follows the global policy, false keeps its runs", () => {
    const s = parseRetention({ keepNewest: 5, archive: false, agents: { assistant: { keepFor: '1h' }, planner: false } }, IDS, new Set(['assistant', 'planner', 'other']))!;
    expect(agentPolicyOf(s, 'assistant')).toEqual({ keepForMs: 3_600_000 });
    expect(agentPolicyOf(s, 'planner')).toBeUndefined();
    expect(agentPolicyOf(s, 'other')).toEqual({ keepNewest: 5 });
    // a workflow's policy is not an agent's, even under the same id
    expect(agentPolicyOf(parseRetention({ archive: false, workflows: { echo: { keepNewest: 1 } } }, IDS, new Set(['echo']))!, 'echo')).toBeUndefined();
  });

  it("refuses an agent policy's mistakes naming its path, against the configured agents", () => {
    const agents = new Set(['assistant']);
    const bad: Array<[unknown, string]> = [
      [{ archive: false, agents: { nope: { keepNewest: 1 } } }, "config.retention.agents.nope: no agent 'nope' is configured (configured: assistant)"],
      [{ archive: false, agents: { assistant: {} } }, 'config.retention.agents.assistant: set keepFor and/or keepNewest (or false to keep every run)'],
      [{ archive: false, agents: { assistant: { keepNewest: 1.5 } } }, 'config.retention.agents.assistant.keepNewest: a count of runs'],
      [{ archive: false, agents: { assistant: { keepFor: '1y' } } }, 'config.retention.agents.assistant.keepFor: a duration is'],
      [{ archive: false, agents: { assistant: { keepFor: '1d', max: 2 } } }, "config.retention.agents.assistant: unknown key 'max'"],
      [{ archive: false, agents: [] }, 'config.retention.agents: an object of agent id → policy (or false to keep its runs)'],
    ];
    for (const [section, message] of bad) expect(() => parseRetention(section, IDS, agents), JSON.stringify(section)).toThrow(message);
    expect(() => parseRetention({ archive: false, agents: { x: false } }, IDS)).toThrow("config.retention.agents.x: no agent 'x' is configured");
  });
});
