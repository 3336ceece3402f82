/**
 * A config whose schema slot holds something other than a zod schema stops the real CLI at
 * start-up: exit code 1 and a message naming the workflow, the step and the slot.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnServer } from '../helpers/spawn-server.js';

const CONFIG = path.resolve(import.meta.dirname, '..', 'fixtures', 'bad-schema.config.ts');
const dirs: string[] = [];

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('start-up with a bad schema in the config', () => {
  it('exits 1 naming the workflow, the nested step and the slot instead of serving', async () => {
    const data = mkdtempSync(path.join(os.tmpdir(), 'eventloom-badschema-'));
    dirs.push(data);
    const outcome = await spawnServer(['--port', '0', '--data', data, '--config', CONFIG]).then(
      (server) => {
        server.child.kill('SIGKILL');
        return new Error(`the server started on ${server.url}`);
      },
      (err: Error) => err,
    );
    expect(outcome.message).toMatch(/^server exited with 1 before listening/);
    expect(outcome.message).toContain("eventloom: Workflow 'approvals' step 'manager-approval' (in 'gate'): resumeSchema must be a zod schema, got a plain object that looks like a JSON Schema");
  });
});
