/**
 * The `eventloom/testing` helper on real workflows: the examples hold every built-in invariant; a
 * planted bug (a step skipped on the path a run takes after a crash) is found and shrunk to a
 * minimal command sequence whose printed snippet reproduces it; a user invariant is checked too.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { INVARIANTS, InvariantViolation, WorkflowPropertyFailure, arbitraryFromSchema, crash, execute, runCommands, settle, testWorkflow, wait } from '../../src/testing/index.js';
import { echoWorkflow, orderApprovalWorkflow } from '../../examples/workflows/index.js';
import { checkoutWorkflow } from './fixtures.js';

describe('testWorkflow on the examples', () => {
  it('order-approval holds every built-in invariant under random commands', async () => {
    await testWorkflow(orderApprovalWorkflow, { numRuns: 40, seed: 7 });
  }, 60_000);

  it('echo holds every built-in invariant with short delays', async () => {
    await testWorkflow(echoWorkflow, { numRuns: 30, seed: 11, input: fc.record({ text: fc.string({ maxLength: 8 }), delayMs: fc.integer({ min: 0, max: 2 }) }) });
  }, 60_000);
});

describe('testWorkflow on a planted bug', () => {
  it('finds the step skipped after a crash and shrinks it to a minimal, runnable sequence', async () => {
    // seed 1: a sequence where the crash is what breaks it (replaying from 'charge' and crashing the replay trips the same bug)
    const failure = await testWorkflow(checkoutWorkflow, { numRuns: 200, seed: 1 }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowPropertyFailure);
    const f = failure as WorkflowPropertyFailure;
    expect(f.message).toContain(INVARIANTS.rehydration);
    expect(f.message).toMatch(/step 'charge': uninterrupted success .*"charged":\d+.*, after the crash skipped/);
    // minimal: the execute, at most a wait for the charge step to start (it starts once its start is durable),
    // and the crash that lands inside it, nothing else
    expect(f.commands.map((c) => c.name)).toEqual(f.commands.length === 2 ? ['execute', 'crash'] : ['execute', 'wait', 'crash']);
    expect(f.commands[0].toString()).toBe('execute({"amount":1})');
    const names = [...new Set(f.commands.map((c) => c.name))].sort().join(', ');
    expect(f.snippet).toBe(
      [`import { runCommands, ${names} } from 'eventloom/testing';`, '', 'await runCommands(checkoutWorkflow, [', ...f.commands.map((c) => `  ${c.toString()},`), ']);'].join('\n'),
    );
    // the snippet's sequence reproduces the failure on its own, and so does the printed code
    await expect(runCommands(checkoutWorkflow, f.commands)).rejects.toThrow(InvariantViolation);
    const file = path.join(import.meta.dirname, `snippet-${process.pid}.tmp.ts`);
    writeFileSync(file, `import { checkoutWorkflow } from './fixtures.js';\n${f.snippet}\n`);
    try {
      await expect(import(pathToFileURL(file).href)).rejects.toThrow(/a rehydrated run equals an uninterrupted one: .*step 'charge'/);
    } finally {
      rmSync(file, { force: true });
    }
  }, 120_000);

  it('passes the same workflow when no crash is generated', async () => {
    await testWorkflow(checkoutWorkflow, { numRuns: 30, seed: 42, without: ['crash'] });
  }, 60_000);
});

describe('runCommands and user invariants', () => {
  it('checks a user invariant over the history and names it when it fails', async () => {
    const neverRejected = {
      'no order is rejected': (h: { executions: Array<{ result?: unknown }> }) => h.executions.every((e) => (e.result as { status?: string } | undefined)?.status !== 'rejected'),
    };
    const history = await runCommands(orderApprovalWorkflow, [execute({ items: [{ price: 5, qty: 1 }] }), settle()], { invariants: neverRejected });
    expect(history.executions).toHaveLength(1);
    expect(history.executions[0]).toMatchObject({ status: 'completed', result: { status: 'approved', total: 5 } });

    const failure = await testWorkflow(orderApprovalWorkflow, { numRuns: 100, seed: 3, invariants: neverRejected, without: ['crash', 'replayFrom', 'cancel', 'suspend'] }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(WorkflowPropertyFailure);
    const f = failure as WorkflowPropertyFailure;
    expect(f.message).toContain('no order is rejected: the predicate returned false');
    // the run must reach its suspension before a resume is accepted: execute, let it run, resume
    expect(f.commands.map((c) => c.toString())).toEqual([expect.stringMatching(/^execute\(/), expect.stringMatching(/^(settle\(\)|wait\(.*\))$/), 'resume({"approved":false})']);
  }, 60_000);

  it('lets a crash land inside a run, which the next engine recovers and completes', async () => {
    const history = await runCommands(orderApprovalWorkflow, [execute({ items: [{ price: 1, qty: 1 }] }), wait({ ticks: 5 }), crash(), settle()]);
    expect(history.crashes).toBe(1);
    expect(history.commands).toEqual([
      { command: 'execute({"items":[{"price":1,"qty":1}]})', outcome: 'ok' },
      { command: 'crash()', outcome: 'ok' },
    ]);
    const types = history.executions[0].records.map((r) => r.type);
    expect(types).toContain('execution.recovered');
    expect(types.at(-1)).toBe('execution.completed');
    expect(history.executions[0].result).toEqual({ status: 'approved', total: 1 });
  });
});

describe('arbitraryFromSchema', () => {
  it('generates only values the schema accepts', () => {
    const schema = z.object({ n: z.number().int().min(2).max(9), tags: z.array(z.enum(['a', 'b'])).max(3), note: z.string().optional(), ok: z.boolean().nullable() });
    fc.assert(fc.property(arbitraryFromSchema(schema), (v) => schema.safeParse(v).success));
  });
});
