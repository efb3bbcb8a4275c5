export { transferWorkflow } from './transfer.ts';
