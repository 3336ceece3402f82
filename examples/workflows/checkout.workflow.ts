/**
 * `checkout` ("Checkout"): an `andWorkflow` step. It runs `order-approval` as a child execution on
 * the order's items, then writes a receipt for the customer. When the child suspends for a manager
 * (a total over 100) the checkout suspends with it, and resuming the checkout
 * (`POST /workflows/checkout/executions/:id/resume {"resumeData": {"approved": true}}`, checked
 * against the child's resume schema) resumes the child where it waits.
 */
import { z } from 'zod';
import { andThen, andWorkflow, createWorkflow } from 'eventloom';
import { orderApprovalWorkflow } from './order-approval.workflow.js';

const Checkout = z.object({ customer: z.string().min(1), items: z.array(z.object({ price: z.number(), qty: z.number() })) });

export const checkoutWorkflow = createWorkflow(
  {
    id: 'checkout',
    name: 'Checkout',
    purpose: "Approve a customer's order through order-approval, then write the receipt",
    input: Checkout.meta({ examples: [{ customer: 'Ada', items: [{ price: 80, qty: 2 }] }] }),
    result: z.object({ customer: z.string(), status: z.string(), total: z.number(), receipt: z.string() }),
  },
  // the child gets this step's input; its input schema keeps `items` and drops `customer`
  andWorkflow({ id: 'approve-order', name: 'Approve the order', workflow: orderApprovalWorkflow }),
  andThen({
    id: 'receipt',
    name: 'Write the receipt',
    execute: ({ data, getInitData }) => {
      const { status, total } = data as { status: string; total: number };
      const { customer } = getInitData<z.infer<typeof Checkout>>();
      return { customer, status, total, receipt: `Order for ${customer}: ${status}, total ${total}` };
    },
  }),
);
