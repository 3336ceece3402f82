/**
 * Example tool: `issueRefund({orderId, amount})`, which needs a person's approval before it runs
 * (`needsApproval: true`). The demo model calls it when a prompt asks for a refund, so the approval
 * flow works offline: the call pauses the run (`status: "awaiting-approval"`) until
 * `POST /agents/assistant/runs/:runId/approvals/:approvalId` approves or denies it.
 */
import { z } from 'zod';
import { createTool } from 'eventloom';

export const issueRefundTool = createTool({
  name: 'issueRefund',
  description: 'Refund an order to the customer (a person approves each refund)',
  parameters: z.object({ orderId: z.string().min(1).describe('The order to refund'), amount: z.number().positive().describe('The amount to refund') }),
  needsApproval: true,
  // a stand-in for a payment provider's refund call
  execute: ({ orderId, amount }) => ({ orderId, amount, refunded: true }),
});
