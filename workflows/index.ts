export { depositWatcherWorkflow, privacyWatcherWorkflow } from './watchers.ts';
export { incomeSweepWorkflow } from './income.ts';
export { recoverWorkflow, voidIntentWorkflow } from './operator.ts';
export { refundWorkflow, strayDepositScannerWorkflow } from './refunds.ts';
export { transferWorkflowV2 } from './transfer.ts';
export { transferWorkflow } from './transferV1.ts';
export { webhookDelivery } from './webhooks.ts';
