/** The example workflows `npm start` serves. */
export { echoWorkflow } from './echo.workflow.js';
export { orderApprovalWorkflow } from './order-approval.workflow.js';
