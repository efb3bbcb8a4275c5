export { recoverWorkflow, voidIntentWorkflow } from './operator.ts';
export { refundWorkflow, strayDepositScannerWorkflow } from './refunds.ts';
export { transferWorkflow } from './transfer.ts';
