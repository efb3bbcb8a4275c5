import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, continueAsNew, log, proxyActivities, sleep, startChild, workflowInfo } from '@temporalio/workflow';
import type { TransferActivities } from '../activities/index.ts';
import type { Address } from './types.ts';

const activities = proxyActivities<TransferActivities>({
  startToCloseTimeout: '2 minutes',
  // Every activity heartbeats while it runs (src/temporal/activityKeepalive.ts): one lost with its worker is retried after this.
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

const scanner = proxyActivities<TransferActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export interface RefundInput {
  routeId: string;
  to: Address;
  reason: string;
  /** The token to refund when it is not the route's source token (a deposit of another ERC-20). */
  token?: Address;
}

/**
 * Refunds what a finished route's deposit address holds. Workflow id `<routeId>:refund`; one runs at a
 * time per route. The refund transaction is keyed by this run, so a retried activity never refunds twice.
 */
export async function refundWorkflow(input: RefundInput): Promise<{ amount: string; txHash: string }> {
  const refund = await activities.refundDeposit({ routeId: input.routeId, to: input.to, key: workflowInfo().runId, token: input.token });
  await activities.clearDepositHolding({ routeId: input.routeId, token: input.token });
  log.info('deposit refunded', { routeId: input.routeId, to: input.to, reason: input.reason, ...refund });
  return refund;
}

export const refundWorkflowId = (routeId: string) => `${routeId}:refund`;

/**
 * Periodically finds surplus, second and late deposits on finished routes: refunds them to the route's
 * refundAddress, or marks them held for an operator. A single instance (id stray-deposit-scanner).
 */
export async function strayDepositScannerWorkflow(input: { intervalSeconds: number; retentionDays: number }): Promise<void> {
  for (let round = 0; round < 200; round++) {
    const strays = await scanner.scanStrayDeposits({ retentionDays: input.retentionDays });
    for (const stray of strays) {
      if (!stray.refundAddress) continue;
      try {
        await startChild(refundWorkflow, {
          workflowId: refundWorkflowId(stray.routeId),
          args: [{ routeId: stray.routeId, to: stray.refundAddress, reason: `stray deposit of ${stray.amount}`, token: stray.token }],
          parentClosePolicy: ParentClosePolicy.ABANDON,
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        });
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    }
    await sleep(`${input.intervalSeconds} seconds`);
  }
  await continueAsNew<typeof strayDepositScannerWorkflow>(input);
}
