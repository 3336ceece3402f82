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

/** Fails the first two runs of its step in each execution, then answers; backoffs of an hour and more. */
const runsByExecution = new Map<string, number>();
const hourlyRetries = createWorkflow(
  { id: 'hourly-retries' },
  andThen({
    id: 'charge',
    retry: { attempts: 4, backoff: { initialMs: 3_600_000, factor: 2, jitter: true } },
    execute: async ({ executionId }) => {
      const n = (runsByExecution.get(executionId) ?? 0) + 1;
      runsByExecution.set(executionId, n);
      if (n <= 2) throw new Error(`down (run ${n})`);
      return { charged: true };
    },
  }),
);

it('a step retried after hour-long backoffs holds every invariant under random commands, each attempt at or after its recorded retryAt', async () => {
  await testWorkflow(hourlyRetries, {
    numRuns: 30,
    seed: 7,
    invariants: {
      'attempts start at or after their retryAt, never more than the policy allows': ({ executions }) => {
        for (const e of executions) {
          let retryAt: number | undefined;
          let starts = 0;
          for (const r of e.records) {
            const d = r.data as { retryAt?: number; stepAttempt?: number };
            if (r.type === 'step.retrying') retryAt = d.retryAt;
            if (r.type === 'step.started') {
              starts = Math.max(starts, d.stepAttempt ?? 1);
              if ((d.stepAttempt ?? 1) > 1 && (retryAt === undefined || r.at < retryAt)) return false;
            }
          }
          if (starts > 4) return false;
        }
        return true;
      },
    },
  });
}, 60_000);
