/**
 * `order-approval` ("Order Approval"): totals an order, asks a manager to approve orders over 100
 * (the execution suspends until resumed with `{approved}`), runs stock and fraud checks in
 * parallel, logs them, races two shipping routes, and finishes with the decision and the total.
 */
import { z } from 'zod';
import { andAll, andRace, andTap, andThen, andWhen, createWorkflow } from 'eventloom';
import { sleep } from './echo.workflow.js';

type Order = { items: Array<{ price: number; qty: number }> };
type Totalled = { total: number; approved?: boolean };

export const orderApprovalWorkflow = createWorkflow(
  {
    id: 'order-approval',
    name: 'Order Approval',
    purpose: 'Approve orders, asking a manager when the total is over 100',
    // an order over 100, so the execution suspends for a manager (examples show in the API explorer)
    input: z.object({ items: z.array(z.object({ price: z.number(), qty: z.number() })) }).meta({
      examples: [
        {
          items: [
            { price: 60, qty: 2 },
            { price: 4.5, qty: 3 },
          ],
        },
      ],
    }),
    result: z.object({ status: z.string(), total: z.number() }),
    suspendSchema: z.object({ total: z.number() }),
    resumeSchema: z.object({ approved: z.boolean() }).meta({ examples: [{ approved: true }] }),
  },
  andThen({
    id: 'compute-total',
    name: 'Compute total',
    purpose: 'Sum price × quantity',
    execute: ({ data }: { data: Order }): Totalled => ({ total: data.items.reduce((sum, i) => sum + i.price * i.qty, 0) }),
  }),
  andWhen({
    id: 'approval-gate',
    name: 'Approval gate',
    purpose: 'Orders over 100 need a manager',
    condition: ({ data }) => (data as Totalled).total > 100,
    step: andThen({
      id: 'manager-approval',
      name: 'Manager approval',
      suspendSchema: z.object({ total: z.number() }),
      resumeSchema: z.object({ approved: z.boolean() }),
      execute: ({ data, resumeData, suspend }) => {
        const { total } = data as Totalled;
        if (resumeData === undefined) suspend('manager approval', { total });
        return { total, approved: (resumeData as { approved: boolean }).approved };
      },
    }),
  }),
  andAll({
    id: 'parallel-checks',
    name: 'Parallel checks',
    steps: [
      andThen({ id: 'check-stock', execute: ({ data }) => ({ check: 'stock', ok: true, total: (data as Totalled).total }) }),
      andThen({ id: 'check-fraud', execute: ({ data }) => ({ check: 'fraud', ok: (data as Totalled).total < 1_000_000 }) }),
    ],
  }),
  andTap({
    id: 'log-checks',
    name: 'Log checks',
    execute: ({ data, logger }) => logger.info({ checks: data }, 'order checks done'),
  }),
  andRace({
    id: 'route-race',
    name: 'Route race',
    steps: [
      andThen({ id: 'fast-route', execute: () => ({ route: 'fast' }) }),
      andThen({
        id: 'slow-route',
        execute: async ({ signal }) => {
          await sleep(1_000, signal);
          return { route: 'slow' };
        },
      }),
    ],
  }),
  andThen({
    id: 'finalise',
    name: 'Finalise',
    execute: ({ getStepResult }) => {
      const gate = getStepResult<Totalled>('approval-gate');
      const computed = getStepResult<Totalled>('compute-total')!;
      return { status: gate?.approved === false ? 'rejected' : 'approved', total: computed.total };
    },
  }),
);
