/**
 * The step builders check `retry`, `timeoutMs` and `retries` when the config is imported: a bad
 * shape throws a TypeError naming the step and the field; a nested step may not have `retry`
 * (its attempts are recorded per top-level step); the definition route shows the policy with its
 * defaults.
 */
import { expect, it } from 'vitest';
import { andAll, andThen, andWhen, createWorkflow } from '../../src/workflows/builder.js';
import { describeWorkflowDetail } from '../../src/workflows/describe.js';

const run = () => 1;

it('rejects a bad retry policy or timeoutMs with a message naming the step and the field', () => {
  const bad: Array<[unknown, RegExp]> = [
    [{ retry: { attempts: 0 } }, /andThen 's': retry.attempts must be a whole number >= 1/],
    [{ retry: { attempts: 2.5 } }, /retry.attempts must be a whole number/],
    [{ retry: 3 }, /andThen 's': retry must be an object/],
    [{ retry: { attempts: 2, tries: 1 } }, /retry has no option 'tries'/],
    [{ retry: { attempts: 2, backoff: { initialMs: -1 } } }, /retry.backoff.initialMs must be a number of ms >= 0, got -1/],
    [{ retry: { attempts: 2, backoff: { factor: 0.5 } } }, /retry.backoff.factor must be a number >= 1/],
    [{ retry: { attempts: 2, backoff: { maxMs: 'soon' } } }, /retry.backoff.maxMs must be a number of ms >= 0, got "soon"/],
    [{ retry: { attempts: 2, backoff: { jitter: 2 } } }, /retry.backoff.jitter must be a boolean or a share between 0 and 1/],
    [{ retry: { attempts: 2, backoff: { delay: 5 } } }, /retry.backoff has no option 'delay'/],
    [{ timeoutMs: 0 }, /andThen 's': timeoutMs must be a positive number of ms, got 0/],
    [{ retries: -1 }, /andThen 's': retries must be a whole number >= 0/],
  ];
  for (const [opts, message] of bad) expect(() => andThen({ id: 's', execute: run, ...(opts as object) })).toThrow(message);
});

it('refuses a retry policy on a nested step, naming the step that may have it', () => {
  const nested = andThen({ id: 'inner', retry: { attempts: 2 }, execute: run });
  expect(() => andAll({ id: 'both', steps: [nested] })).toThrow(/andAll 'both': nested step 'inner' has a retry policy, which only a top-level step may have \(give it to 'both'/);
  expect(() => andWhen({ id: 'maybe', condition: () => true, step: nested })).toThrow(/andWhen 'maybe': nested step 'inner'/);
  // timeoutMs is fine anywhere
  expect(() => andAll({ id: 'ok', steps: [andThen({ id: 'inner', timeoutMs: 10, execute: run })] })).not.toThrow();
});

it('shows the retry policy with its defaults and the timeout in the definition', () => {
  const wf = createWorkflow({ id: 'w' }, andThen({ id: 's', retry: { attempts: 3, backoff: { initialMs: 500 } }, timeoutMs: 2_000, execute: run }));
  expect((describeWorkflowDetail(wf).steps as Array<Record<string, unknown>>)[0]).toMatchObject({
    retry: { attempts: 3, backoff: { initialMs: 500, factor: 2, maxMs: 300_000, jitter: 0 } },
    timeoutMs: 2_000,
  });
});
