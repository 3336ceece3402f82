/**
 * `payment-reminder`: gives an order a grace period (a durable sleep), reminds once, then waits for
 * its `payment` event (sent to the execution: `POST /workflows/payment-reminder/executions/:id/events`,
 * kept if it comes during the grace period) for at most `waitMs`; without one the order is unpaid.
 * Both waits are records: a restart neither loses nor repeats them. The reminder step has a durable
 * `retry` policy: its failed attempts and their backoffs are records too.
 */
import { z } from 'zod';
import { andSleep, andThen, andWaitForEvent, createWorkflow } from 'eventloom';

export const paymentReminderWorkflow = createWorkflow(
  {
    id: 'payment-reminder',
    name: 'Payment Reminder',
    purpose: 'Waits for the payment of an order, with a reminder after a grace period',
    input: z
      .object({
        orderId: z.string(),
        graceMs: z.number().int().min(0).max(86_400_000).default(2_000),
        waitMs: z.number().int().min(0).max(604_800_000).default(60_000),
      })
      .meta({ examples: [{ orderId: 'A1', graceMs: 2_000, waitMs: 60_000 }] }),
    result: z.object({ orderId: z.string(), status: z.enum(['paid', 'unpaid']), amount: z.number().optional() }),
  },
  andSleep({ id: 'grace', name: 'Grace period', duration: ({ data }) => (data as { graceMs: number }).graceMs }),
  andThen({
    id: 'remind',
    name: 'Remind',
    // sending a reminder goes out to a mail service: a failure is tried again (after 1 s, then 2 s), durably;
    // an attempt that hangs fails after 5 s
    retry: { attempts: 3, backoff: { initialMs: 1_000, factor: 2, jitter: 0.2 } },
    timeoutMs: 5_000,
    execute: async ({ data, logger }) => (logger.info({ orderId: (data as { orderId: string }).orderId }, 'payment reminder sent'), data as unknown),
  }),
  andWaitForEvent({ id: 'paid', name: 'Wait for the payment', event: 'payment', schema: z.object({ amount: z.number().positive() }), timeoutMs: 60_000, onTimeout: 'continue' }),
  andThen({
    id: 'close',
    name: 'Close',
    execute: async ({ data, getInitData }) => {
      const { orderId } = getInitData<{ orderId: string }>();
      return data === null ? { orderId, status: 'unpaid' as const } : { orderId, status: 'paid' as const, amount: (data as { amount: number }).amount };
    },
  }),
);
