import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  ParentClosePolicy,
  continueAsNew,
  defineQuery,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { TransferActivities } from '../activities/index.ts';
import { finalFailure } from '../src/failures.ts';
import { finalTypes, isFailureType } from '../src/domain/failures.ts';
import type { Address } from '../src/domain/address.ts';
import { refundFailedNote } from '../src/domain/refundNote.ts';

const activities = proxyActivities<TransferActivities>({
  startToCloseTimeout: '2 minutes',
  // Every activity heartbeats while it runs (src/temporal/activityKeepalive.ts): one lost with its worker is retried after this.
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/** A refund moves money: a few tries within a time budget, then the route is flagged for an operator (never retried forever). */
export const REFUND_MAX_ATTEMPTS = 5;
/** Refusals a retry cannot change; the first two need no operator either. */
const REFUND_FINAL = finalTypes('refund');
const refunds = proxyActivities<TransferActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  scheduleToCloseTimeout: '15 minutes',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: REFUND_MAX_ATTEMPTS,
    nonRetryableErrorTypes: REFUND_FINAL,
  },
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
  /** An operator's refund (routectl refund): its audit row in operator_actions, which the activity requires. */
  actionId?: number;
  operator?: string;
  /** An automatic refund of a stray deposit first waits this long (docs/privacy.md, "Strays and refunds"). */
  delaySeconds?: number;
  /**
   * An operator's refund that waits its own random delay (routectl refund without --now): checked first, then it waits
   * REFUND_DELAY_MIN..MAX_SECONDS; the scheduleQuery tells routectl the outcome of the check and when it will be sent.
   */
  operatorDelay?: boolean;
}

/** Where an operator's delayed refund stands: checked (and when it will be sent), or refused by the check. */
export interface RefundSchedule {
  checked: boolean;
  sendsAt?: number;
}
export const refundScheduleQuery = defineQuery<RefundSchedule>('refundSchedule');

/**
 * Refunds what a finished route's deposit address holds, after `delaySeconds` when the stray-deposit scanner asked.
 * Workflow id `<routeId>:refund`; one runs (or waits) at a time per route. The refund transaction is keyed by this run, so a retried activity never refunds twice, and an
 * earlier run's refund is settled (and booked, if it mined) before this run signs one (activities/funds.ts).
 * A refund that still fails after REFUND_MAX_ATTEMPTS tries (or 15 minutes) ends this run and flags the route
 * (`routectl list --stuck`); dust below REFUND_MIN_AMOUNT and an empty deposit address are refused without a flag.
 */
export async function refundWorkflow(input: RefundInput): Promise<{ amount: string; txHash: string; to?: string; earlier?: string }> {
  const schedule: RefundSchedule = { checked: false };
  setHandler(refundScheduleQuery, () => schedule);
  // Inputs without a delay (operators' refunds with --now, and every refund started before the delay existed) start at once.
  if (input.delaySeconds) await sleep(input.delaySeconds * 1000);
  if (input.operatorDelay) {
    const { delaySeconds } = await refunds.prepareOperatorRefund({ routeId: input.routeId, to: input.to, key: 'check', actionId: input.actionId });
    Object.assign(schedule, { checked: true, sendsAt: Date.now() + delaySeconds * 1000 });
    await sleep(delaySeconds * 1000);
  }
  let refund: { amount: string; txHash: string; to?: string; earlier?: string };
  try {
    refund = await refunds.refundDeposit({ routeId: input.routeId, to: input.to, key: workflowInfo().runId, token: input.token, actionId: input.actionId });
  } catch (error) {
    // Runs before this change retried forever and never got here.
    if (!patched('refund-attempt-limit')) throw error;
    const cause = error instanceof ActivityFailure && error.cause ? error.cause : (error as Error);
    const type = cause instanceof ApplicationFailure ? cause.type : null;
    // A refused operator check says nothing about the route's funds: no flag. Runs from before the checks never
    // failed with this type, so their histories replay unchanged.
    if (type !== 'NothingToRefund' && type !== 'RefundBelowMinimum' && type !== 'OperatorActionRefused') {
      await activities.flagRoute({ routeId: input.routeId, error: refundFailedNote(input.to, cause.message), actionId: input.actionId });
    }
    throw finalFailure(isFailureType(type) ? type : 'RefundFailed', cause.message);
  }
  await activities.clearDepositHolding({ routeId: input.routeId, token: input.token });
  log.info('deposit refunded', { routeId: input.routeId, to: input.to, reason: input.reason, ...refund });
  return refund;
}

export const refundWorkflowId = (routeId: string) => `${routeId}:refund`;

/**
 * Periodically finds surplus, second and late deposits on finished routes: refunds them to the route's
 * refundAddress, or marks them held for an operator. A single instance (id stray-deposit-scanner).
 * `retentionDays` is no longer used (the deposit watcher reports late deposits of any age); scanners started
 * before still pass it.
 */
export async function strayDepositScannerWorkflow(input: { intervalSeconds: number; retentionDays?: number }): Promise<void> {
  for (let round = 0; round < 200; round++) {
    const strays = await scanner.scanStrayDeposits({});
    for (const stray of strays) {
      if (!stray.refundAddress) continue;
      try {
        await startChild(refundWorkflow, {
          workflowId: refundWorkflowId(stray.routeId),
          args: [
            {
              routeId: stray.routeId,
              to: stray.refundAddress,
              reason: `stray deposit of ${stray.amount}`,
              token: stray.token,
              ...(stray.delaySeconds !== undefined && { delaySeconds: stray.delaySeconds }),
            },
          ],
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
