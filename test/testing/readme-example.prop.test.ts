/**
 * The README's vitest example of `eventloom/testing`, as written there (only the workflow's import
 * path differs): it must pass on the example `order-approval` workflow.
 */
import { it } from 'vitest';
import { testWorkflow } from 'eventloom/testing';
import { orderApprovalWorkflow } from '../../examples/workflows/order-approval.workflow.js';

it('order-approval holds its invariants under random commands', async () => {
  await testWorkflow(orderApprovalWorkflow, {
    numRuns: 100,
    invariants: {
      // your own: a predicate over every execution's records
      'a rejected order has a total over 100': ({ executions }) => executions.every((e) => (e.result as any)?.status !== 'rejected' || (e.result as any).total > 100),
    },
  });
}, 60_000);
