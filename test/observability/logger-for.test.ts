/**
 * `loggerFor` narrows a logger without stacking pino bindings: every key appears once per line, the latest
 * value wins, and a key the base logger already binds to the same value is not written again.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loggerFor } from '../../src/kernel/logger-for.js';

function capture() {
  const lines: string[] = [];
  const root = pino({ level: 'info', base: undefined, timestamp: false }, { write: (l: string) => void lines.push(l.trim()) });
  return { root, lines };
}

describe('loggerFor', () => {
  it('writes a key bound again once, with its latest value', () => {
    const { root, lines } = capture();
    const step = loggerFor(root.child({ component: 'workflows' }), { workflowId: 'w', executionId: 'e', stepId: 'outer' });
    loggerFor(step, { stepId: 'outer' }).info('same step');
    loggerFor(step, { stepId: 'inner', userId: undefined }).info('nested step');
    expect(lines).toEqual([
      '{"level":30,"component":"workflows","workflowId":"w","executionId":"e","stepId":"outer","msg":"same step"}',
      '{"level":30,"component":"workflows","workflowId":"w","executionId":"e","stepId":"inner","msg":"nested step"}',
    ]);
  });

  it('leaves out a key its base already binds to the same value', () => {
    const { root, lines } = capture();
    loggerFor(root.child({ component: 'agents' }), { component: 'agents', agentId: 'a' }).info('hi');
    expect(lines).toEqual(['{"level":30,"component":"agents","agentId":"a","msg":"hi"}']);
  });
});
