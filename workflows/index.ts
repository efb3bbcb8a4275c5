export { refundWorkflow, strayDepositScannerWorkflow } from './refunds.ts';
export { transferWorkflow } from './transfer.ts';
