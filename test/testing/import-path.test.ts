/** The helper is reachable under its documented import path, `eventloom/testing` (the package's exports map). */
import { describe, expect, it } from 'vitest';

describe('eventloom/testing', () => {
  it('resolves to the testing helper through the package exports', async () => {
    const mod = await import('eventloom/testing');
    expect(typeof mod.testWorkflow).toBe('function');
    expect(typeof mod.runCommands).toBe('function');
    expect(mod.execute({ a: 1 }).toString()).toBe('execute({"a":1})');
  });
});
