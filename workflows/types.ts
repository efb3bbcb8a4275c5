/**
 * The Temporal names of the service: workflow types, task queues, search attributes and the ids of its
 * single-instance workflows. The transfer vocabulary they carry (statuses, the route plan, held funds, the status
 * projection, the watchers' observations, the failure catalogue) is in src/domain/.
 */

export const TASK_QUEUE_DEFAULT = 'private-route';
/** New transfers run version 2; `transferWorkflow` (v1) only finishes transfers started before it. */
export const WORKFLOW_TYPE = 'transferWorkflowV2';

/**
 * The task queues of one deployment, named after TEMPORAL_TASK_QUEUE (docs/performance.md):
 * - `steps`: workflow tasks and the short steps that move money or write the books;
 * - `waits`: long waits on the outside world (bridge fills, the deposit watchers, the stray-deposit scan), many slots;
 * - `proofs`: pool withdrawals, which prove (one proof uses every core): workers here scale proving out.
 * Money-moving steps never wait behind a long poll or a proof for a slot.
 */
export function taskQueues(base: string) {
  return { steps: base, waits: `${base}-waits`, proofs: `${base}-proofs` };
}

/** Custom search attributes, registered by temporal-dev.yaml. */
export const SEARCH_ATTRIBUTES = { status: 'TransferStatus', needsAttention: 'NeedsAttention' } as const;

export const REFUND_WORKFLOW_TYPE = 'refundWorkflow';

export const STRAY_SCANNER_WORKFLOW_TYPE = 'strayDepositScannerWorkflow';
export const STRAY_SCANNER_WORKFLOW_ID = 'stray-deposit-scanner';

export const DEPOSIT_WATCHER_WORKFLOW_TYPE = 'depositWatcherWorkflow';
export const PRIVACY_WATCHER_WORKFLOW_TYPE = 'privacyWatcherWorkflow';
export const PRIVACY_WATCHER_WORKFLOW_ID = 'privacy-watcher';
/** One deposit watcher per source chain. */
export const depositWatcherWorkflowId = (chainId: number) => `deposit-watcher-${chainId}`;
