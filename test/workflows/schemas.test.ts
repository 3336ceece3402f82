/**
 * Schema slots: every place a config takes a schema is checked when the definition is built (so a
 * bad config fails at start-up naming its entry), and declared result/output schemas are enforced
 * when a run or a step completes.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { andAgent, andAll, andThen, andWhen, createWorkflow } from '../../src/workflows/builder.js';
import { executionResult, startExecution } from '../../src/workflows/commands.js';
import { createTool } from '../../src/kernel/define-tool.js';
import { agentMemory } from '../../src/memory/agent-memory.js';
import { checkSchemaSlot, isZodSchema } from '../../src/kernel/schema-slot.js';
import { foldExecution } from '../../src/workflows/executions-view.js';
import { makeEngine, recordsOf } from './helpers.js';

const step = () => andThen({ id: 'only', execute: () => ({ ok: true }) });
const JSON_SCHEMA = { type: 'object', properties: { customer: { type: 'string' } }, required: ['customer'] };

describe('schema slots at definition time', () => {
  it('tells zod 4 schemas from shapes, JSON Schema objects and other values', () => {
    expect(isZodSchema(z.object({ a: z.string() }))).toBe(true);
    expect(isZodSchema(z.fromJSONSchema(JSON_SCHEMA as never))).toBe(true);
    expect(isZodSchema({ customer: z.string() })).toBe(false);
    expect(isZodSchema(JSON_SCHEMA)).toBe(false);
    expect(isZodSchema({ safeParse: () => ({ success: true }) })).toBe(false);
    expect(() => checkSchemaSlot('x', 'input', { _zod: {} })).toThrow('x: input must be a zod schema, got a zod mini schema');
    expect(() => checkSchemaSlot('x', 'input', { safeParse: () => ({ success: true }) })).toThrow('x: input must be a zod schema, got a schema of another zod version');
    expect(() => checkSchemaSlot('x', 'input', undefined)).not.toThrow();
    expect(() => checkSchemaSlot('x', 'parameters', undefined, true)).toThrow('x: parameters must be a zod schema, got nothing');
  });

  it('refuses a workflow input given as a plain JSON Schema object, naming the workflow and the slot', () => {
    expect(() => createWorkflow({ id: 'orders', input: JSON_SCHEMA as never }, step())).toThrow(
      "Workflow 'orders': input must be a zod schema, got a plain object that looks like a JSON Schema (JSON Schema is not accepted here: convert it with z.fromJSONSchema(...))",
    );
  });

  it('refuses a zod shape where a schema is expected and says how to wrap it', () => {
    expect(() => createWorkflow({ id: 'orders', input: { customer: z.string() } as never }, step())).toThrow(
      "Workflow 'orders': input must be a zod schema, got an object of zod schemas (a shape: wrap it in z.object({...}))",
    );
    expect(() => createWorkflow({ id: 'orders', result: { ok: z.boolean() } as never }, step())).toThrow("Workflow 'orders': result must be a zod schema");
  });

  it('names the nested step and its parents for a bad step schema', () => {
    const build = () =>
      createWorkflow(
        { id: 'approvals' },
        andWhen({
          id: 'gate',
          condition: () => true,
          step: andThen({ id: 'manager', resumeSchema: { approved: 'boolean' } as never, execute: () => 1 }),
        }),
      );
    expect(build).toThrow("Workflow 'approvals' step 'manager' (in 'gate'): resumeSchema must be a zod schema, got a plain object");
    expect(() => createWorkflow({ id: 'w' }, andAll({ id: 'group', steps: [andThen({ id: 'a', outputSchema: 'string' as never, execute: () => 1 })] }))).toThrow(
      "Workflow 'w' step 'a' (in 'group'): outputSchema must be a zod schema, got a string",
    );
    expect(() => createWorkflow({ id: 'w' }, andAgent({ id: 'ask', agent: 'assistant', prompt: () => 'hi', schema: { title: z.string() } as never }))).toThrow(
      "Workflow 'w' step 'ask': schema must be a zod schema, got an object of zod schemas",
    );
  });

  it('checks tool parameters and working-memory schemas with the same rule', () => {
    expect(() => createTool({ name: 'lookup', description: '', parameters: JSON_SCHEMA as never })).toThrow(
      'Tool lookup: parameters must be a zod schema, got a plain object that looks like a JSON Schema',
    );
    expect(() => createTool({ name: 'lookup', description: '', parameters: undefined as never })).toThrow('Tool lookup: parameters must be a zod schema, got nothing');
    expect(() => agentMemory({ workingMemory: { schema: { name: z.string() } as never } })).toThrow('agentMemory(): workingMemory.schema must be a zod schema, got an object of zod schemas');
    expect(() => createTool({ name: 'lookup', description: '', parameters: z.object({ q: z.string() }) })).not.toThrow();
  });
});

describe('declared schemas at run time', () => {
  it('ends a run in error when its final data fails the declared result schema, naming the issue', async () => {
    const w = createWorkflow({ id: 'checked', result: z.object({ ok: z.boolean() }) }, andThen({ id: 'answer', execute: () => ({ ok: 'yes' }) }));
    const engine = makeEngine([w]);
    const run = await startExecution(engine, 'checked', {});
    const rec = await run.settled;
    expect(rec.type).toBe('execution.failed');
    expect((rec.data as { error: { message: string } }).error.message).toMatch(/^Workflow result does not match its result schema: ok: .*boolean/);
    expect(() => executionResult(rec, run.executionId, run.createdAt)).toThrow('Failed to execute workflow');
    expect(foldExecution(await recordsOf(engine, run.executionId)).status).toBe('error');
  });

  it('completes with the parsed result when the final data matches', async () => {
    const w = createWorkflow({ id: 'parsed', result: z.object({ n: z.coerce.number() }) }, andThen({ id: 'answer', execute: () => ({ n: '5', extra: 1 }) }));
    const engine = makeEngine([w]);
    const rec = await (await startExecution(engine, 'parsed', {})).settled;
    expect(rec.type).toBe('execution.completed');
    expect((rec.data as { result: unknown }).result).toEqual({ n: 5 });
  });

  it('fails the step whose output fails its declared outputSchema, nested steps included', async () => {
    const w = createWorkflow(
      { id: 'steps' },
      andThen({ id: 'first', outputSchema: z.object({ n: z.number() }), execute: () => ({ n: 1 }) }),
      andAll({ id: 'group', steps: [andThen({ id: 'inner', outputSchema: z.string(), execute: () => 42 })] }),
    );
    const engine = makeEngine([w]);
    const rec = await (await startExecution(engine, 'steps', {})).settled;
    expect(rec.type).toBe('execution.failed');
    expect((rec.data as { error: unknown }).error).toMatchObject({
      stepId: 'group',
      name: 'ValidationError',
      message: expect.stringMatching(/^Step 'inner' output does not match its outputSchema: \(root\): .*string/),
    });
  });

  it('checks a step input against its inputSchema before running it (a tap only logs the mismatch)', async () => {
    let ran = 0;
    const { andTap } = await import('../../src/workflows/builder.js');
    const w = createWorkflow(
      { id: 'inputs' },
      andTap({ id: 'tap', inputSchema: z.object({ missing: z.string() }), execute: () => void ran++ }),
      andThen({ id: 'typed', inputSchema: z.object({ n: z.number() }), execute: () => void ran++ }),
    );
    const engine = makeEngine([w]);
    const rec = await (await startExecution(engine, 'inputs', { n: 'one' })).settled;
    expect(rec.type).toBe('execution.failed');
    expect((rec.data as { error: { message: string } }).error.message).toMatch(/^Step 'typed' input does not match its inputSchema: n: /);
    expect(ran).toBe(0);
    const ok = await (await startExecution(engine, 'inputs', { n: 2 })).settled;
    expect(ok.type).toBe('execution.completed');
    expect(ran).toBe(1); // the tap was skipped with its input mismatch logged, the typed step ran
  });
});
