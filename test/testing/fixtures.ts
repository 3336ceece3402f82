/**
 * A checkout workflow with a planted bug for the testing helper's own tests: its `charge` step is
 * guarded by an in-memory record of charges (standing in for a payment provider that remembers a
 * charge across a restart). After a crash in the middle of charging, the recovered run re-evaluates
 * the guard, finds the earlier charge and skips the step: the resumed run takes another path than
 * an uninterrupted one.
 */
import { z } from 'zod';
import { andThen, andWhen, createWorkflow } from '../../src/workflows/builder.js';

const charged = new Set<string>();
const ioTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export const checkoutWorkflow = createWorkflow(
  { id: 'checkout', input: z.object({ amount: z.number().int().min(1).max(500) }) },
  andThen({ id: 'reserve', execute: ({ data }) => ({ ...(data as { amount: number }), reserved: true }) }),
  andWhen({
    id: 'charge',
    // the bug: "already charged" is read from outside the log, so a re-run after a crash skips the step
    condition: ({ executionId }) => !charged.has(executionId),
    step: andThen({
      id: 'charge-card',
      execute: async ({ data, executionId }) => {
        charged.add(executionId);
        await ioTurn(); // the provider's answer takes an event-loop turn
        return { ...(data as object), charged: (data as { amount: number }).amount };
      },
    }),
  }),
  andThen({ id: 'ship', execute: ({ data }) => ({ shipped: true, charged: (data as { charged?: number }).charged ?? 0 }) }),
);
