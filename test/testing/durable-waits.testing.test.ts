/**
 * `testWorkflow` on a workflow that sleeps a day: the harness runs durable waits on its virtual
 * time, so random commands (crashes, suspends, resumes, cancels) hold every built-in invariant
 * without a day of waiting.
 */
import { it } from 'vitest';
import { andSleep, andThen, createWorkflow } from '../../src/workflows/builder.js';
import { testWorkflow } from '../../src/testing/index.js';

const overnight = createWorkflow(
  { id: 'overnight' },
  andThen({ id: 'before', execute: async () => ({ n: 1 }) }),
  andSleep({ id: 'night', duration: 86_400_000 }),
  andThen({ id: 'after', execute: async ({ data }) => ({ n: (data as { n: number }).n + 1 }) }),
);

it('a workflow sleeping a day holds every built-in invariant under random commands, on virtual time', async () => {
  await testWorkflow(overnight, { numRuns: 30, seed: 11 });
}, 60_000);
