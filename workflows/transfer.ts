import { defineSearchAttributeKey } from '@temporalio/common';
import { ActivityFailure, ApplicationFailure, log, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { TransferActivities } from '../activities/index.ts';
import { SEARCH_ATTRIBUTES, type RoutePlan, type TransferStatus } from './types.ts';

const NON_RETRYABLE = ['BridgeRouteRejected', 'BridgeRefunded', 'BridgeFailed', 'DeliveryMismatch', 'TransactionRevertedError', 'NonceConsumedError'];

const steps = proxyActivities<TransferActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10, nonRetryableErrorTypes: NON_RETRYABLE },
});

const waits = proxyActivities<TransferActivities>({
  startToCloseTimeout: '3 hours',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', nonRetryableErrorTypes: NON_RETRYABLE },
});

const statusKey = defineSearchAttributeKey(SEARCH_ATTRIBUTES.status, 'KEYWORD');

/**
 * One transfer, workflow id = routeId:
 * await deposit → bridge in → shield → unshield → bridge out (exact output) → confirm payout.
 * Deterministic orchestration only; every side effect is an activity.
 */
export async function transferWorkflow(plan: RoutePlan): Promise<TransferStatus> {
  let seq = 0;
  const setStatus = async (status: TransferStatus, extra: { error?: string; payoutTxHash?: string } = {}) => {
    seq += 1;
    upsertSearchAttributes([{ key: statusKey, value: status }]);
    await steps.projectStatus({ routeId: plan.routeId, seq, status, ...extra });
  };

  try {
    await setStatus('AWAITING_DEPOSIT');
    const deposit = await waits.awaitDeposit(plan);
    if (!deposit.funded) {
      await setStatus('FAILED', { error: `no deposit of ${plan.amount} received at ${plan.depositAddress} before ${plan.depositDeadline}` });
      return 'FAILED';
    }

    await setStatus('BRIDGING_IN');
    const inbound = await steps.bridgeIn(plan);
    const inFill = await waits.awaitBridgeFill({ routeId: plan.routeId, leg: 'in', requestId: inbound.requestId });
    await steps.confirmDelivery({
      routeId: plan.routeId,
      leg: 'in',
      chainId: plan.hubChainId,
      token: plan.hubToken,
      recipient: plan.hubAccount,
      amount: inbound.amountOut,
      txHashes: inFill.txHashes,
    });
    await setStatus('RECEIVED_ON_HUB');

    await steps.shield({ plan, amount: inbound.amountOut });
    await setStatus('SHIELDED');

    const unshielded = await steps.unshield(plan);
    await setStatus('UNSHIELD_SENT');

    await setStatus('BRIDGING_OUT');
    const outbound = await steps.bridgeOut(plan);
    const outFill = await waits.awaitBridgeFill({ routeId: plan.routeId, leg: 'out', requestId: outbound.requestId });
    const payout = await steps.confirmDelivery({
      routeId: plan.routeId,
      leg: 'out',
      chainId: plan.destChainId,
      token: plan.destToken,
      recipient: plan.recipient,
      amount: plan.quotedOutputAmount,
      txHashes: outFill.txHashes,
    });
    await steps.recordServiceFee({
      routeId: plan.routeId,
      chainId: plan.hubChainId,
      token: plan.hubToken,
      unshielded: unshielded.amount,
      bridgedOut: outbound.amountIn,
    });
    await setStatus('COMPLETED', { payoutTxHash: payout.txHash });
    return 'COMPLETED';
  } catch (error) {
    const cause = describeFailure(error);
    log.error('transfer failed', { routeId: plan.routeId, cause });
    await setStatus('FAILED', { error: cause });
    return 'FAILED';
  }
}

function describeFailure(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause instanceof ApplicationFailure) return error.cause.message;
  if (error instanceof ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}
