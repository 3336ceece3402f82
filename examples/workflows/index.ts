/** The example workflows `npm start` serves: together they use every step kind. */
export { echoWorkflow } from './echo.workflow.js';
export { orderApprovalWorkflow } from './order-approval.workflow.js';
export { weatherBriefWorkflow } from './weather-brief.workflow.js';
export { checkoutWorkflow } from './checkout.workflow.js';
export { paymentReminderWorkflow } from './payment-reminder.workflow.js';
