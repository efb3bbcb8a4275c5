import { type ActivityOptions, defineSearchAttributeKey } from '@temporalio/common';
import {
  ActivityFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { TransferActivities } from '../activities/index.ts';
import { failure, failureTypeOf } from '../src/failures.ts';
import { finalTypes } from '../src/domain/failures.ts';
import { redactUrls } from '../src/redact.ts';
import { failUpdate, retryUpdate, stateQuery } from './definitions.ts';
import { SEARCH_ATTRIBUTES } from './types.ts';
import type { BridgeLeg, BridgeOrderRef, RoutePlan } from '../src/domain/plan.ts';
import type { HeldFunds, ParkedStep } from '../src/domain/heldFunds.ts';
import type { TransferStatus } from '../src/domain/status.ts';

/**
 * Every activity heartbeats while it runs (src/temporal/activityKeepalive.ts), so one lost with its worker
 * (kill -9, OOM) is retried elsewhere after this long, not after its start-to-close timeout.
 */
const HEARTBEAT_TIMEOUT = '10 seconds';

/** Bookkeeping (projection, ledger reads) must never park a transfer: retried until it works. */
const bookkeeping = proxyActivities<TransferActivities>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

const statusKey = defineSearchAttributeKey(SEARCH_ATTRIBUTES.status, 'KEYWORD');
const attentionKey = defineSearchAttributeKey(SEARCH_ATTRIBUTES.needsAttention, 'BOOL');

type Decision = { kind: 'retry' } | { kind: 'fail'; reason: string };

/** The operator ended the route. */
class OperatorFailure extends Error {}

/** Gives a failed route's unspent pool note back to its hub account; a few tries, then the note is reported as held. */
const recovery = proxyActivities<TransferActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/**
 * Version 1 of the transfer workflow (type `transferWorkflow`), frozen: it only finishes transfers started before
 * version 2 (workflows/transfer.ts), whose recorded histories (test/workflow/histories) it must replay unchanged.
 *
 * One transfer, workflow id = routeId:
 * await deposit → bridge in → shield → privacy wait → unshield → bridge out (exact output) → confirm payout.
 * Once funds are received, a step that exhausts its retry budget parks the transfer (status kept,
 * NeedsAttention = true) until an operator sends the `retry` or `fail` update. It never fails on its own
 * while it holds funds. Deterministic orchestration only; every side effect is an activity.
 */
export async function transferWorkflow(plan: RoutePlan): Promise<TransferStatus> {
  // Transfers started before the Privacy Pools pool (recorded in test/workflow/histories) had no privacy wait and no ragequit.
  const privacyRules = patched('privacy-pools');
  const budget: ActivityOptions = {
    scheduleToCloseTimeout: `${plan.settings.stepTimeBudgetSeconds} seconds`,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: plan.settings.stepMaxAttempts,
      nonRetryableErrorTypes: finalTypes('transferStep'),
    },
  };
  const steps = proxyActivities<TransferActivities>({ ...budget, startToCloseTimeout: '2 minutes', heartbeatTimeout: HEARTBEAT_TIMEOUT });
  // A withdrawal may queue behind other routes' proofs.
  const proving = proxyActivities<TransferActivities>({ ...budget, startToCloseTimeout: '30 minutes', heartbeatTimeout: HEARTBEAT_TIMEOUT });
  const waits = proxyActivities<TransferActivities>({ ...budget, startToCloseTimeout: '3 hours', heartbeatTimeout: HEARTBEAT_TIMEOUT });
  const deposits = proxyActivities<TransferActivities>({
    startToCloseTimeout: '48 hours',
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });

  let status: TransferStatus = 'AWAITING_DEPOSIT';
  let seq = 0;
  let step: string | null = 'await-deposit';
  let parked: ParkedStep | null = null;
  let decision: Decision | null = null;
  // Read through a function: TypeScript narrows `decision` to what this function last assigned, not what a handler set meanwhile.
  const pending = (): Decision | null => decision;
  let fundsReceived = false;
  let inPool = false;

  setHandler(stateQuery, () => ({ status, step, parked }));
  setHandler(
    retryUpdate,
    () => {
      decision = { kind: 'retry' };
      return `retrying ${parked?.step}`;
    },
    {
      validator: () => {
        if (!parked) throw new Error(`route is not parked (status ${status}); only a parked route can be retried`);
      },
    },
  );
  setHandler(
    failUpdate,
    ({ reason }) => {
      decision = { kind: 'fail', reason: reason.trim() };
      return 'failing';
    },
    {
      validator: (input) => {
        if (typeof input?.reason !== 'string' || !input.reason.trim()) throw new Error('a non-empty reason is required');
        if (!parked && status !== 'AWAITING_DEPOSIT') {
          throw new Error(`route is not parked (status ${status}, step ${step}); only a parked route or one still awaiting its deposit can be failed`);
        }
      },
    },
  );

  const setStatus = async (next: TransferStatus, extra: { error?: string; payoutTxHash?: string; heldFunds?: HeldFunds[] } = {}) => {
    status = next;
    seq += 1;
    upsertSearchAttributes([{ key: statusKey, value: next }]);
    await bookkeeping.projectStatus({ routeId: plan.routeId, seq, status: next, ...extra });
  };

  /** Waits for an operator decision, with the transfer visibly parked meanwhile. */
  const park = async (parkedStep: string, error: string): Promise<Decision> => {
    parked = { step: parkedStep, error, since: new Date().toISOString() };
    log.warn('transfer parked', { routeId: plan.routeId, ...parked });
    upsertSearchAttributes([{ key: attentionKey, value: true }]);
    upsertMemo({ parked });
    setCurrentDetails(
      `**Parked** at \`${parkedStep}\` since ${parked.since}\n\n${error}\n\nOperator: \`routectl retry ${plan.routeId}\` or \`routectl fail ${plan.routeId} --reason "…"\``,
    );
    await bookkeeping.projectAttention({ routeId: plan.routeId, parked });
    await condition(() => decision !== null);
    const taken = pending() ?? { kind: 'retry' };
    decision = null;
    parked = null;
    upsertSearchAttributes([{ key: attentionKey, value: false }]);
    upsertMemo({ parked: null });
    setCurrentDetails('');
    await bookkeeping.projectAttention({ routeId: plan.routeId, parked: null });
    log.info('operator decision', { routeId: plan.routeId, decision: taken.kind });
    return taken;
  };

  /** Runs a step; once funds were received, a failure parks instead of failing, and `retry` runs it again. */
  const runStep = async <T>(name: string, body: (attempt: number) => Promise<T>): Promise<T> => {
    step = name;
    for (let attempt = 1; ; attempt++) {
      try {
        return await body(attempt);
      } catch (error) {
        if (!fundsReceived || isCancellation(error)) throw error;
        const taken = await park(name, describeFailure(error));
        if (taken.kind === 'fail') throw new OperatorFailure(taken.reason);
      }
    }
  };

  /** A bridge leg: place and fund the order, wait for the fill, confirm delivery on chain. */
  const bridgeLeg = (
    leg: BridgeLeg,
    place: (generation: number) => Promise<BridgeOrderRef>,
    confirm: (order: BridgeOrderRef, txHashes: `0x${string}`[]) => Promise<{ txHash: string; amount: string }>,
  ) => {
    let generation = 1;
    return runStep(`bridge-${leg}`, async () => {
      try {
        const order = await place(generation);
        const fill = await waits.awaitBridgeFill({ plan, leg, order });
        return { order, delivery: await confirm(order, fill.txHashes) };
      } catch (error) {
        // A refunded or failed order is final: the next attempt opens a new order with the returned funds.
        const type = failureTypeOf(error);
        if (type === 'BridgeRefunded' || type === 'BridgeFailed') generation += 1;
        throw error;
      }
    });
  };

  /** Deposit stage: the full amount by the deadline, or the documented underpayment policy. */
  const awaitFullDeposit = async (): Promise<boolean> => {
    let deadline = plan.depositDeadline;
    for (;;) {
      step = 'await-deposit';
      const scope = new CancellationScope();
      const wait = scope.run(() => deposits.awaitDeposit({ ...plan, depositDeadline: deadline }));
      wait.catch(() => {});
      const failed = condition(() => decision?.kind === 'fail').then(() => null);
      const outcome = await Promise.race([wait, failed]);
      // A `fail` accepted in the activation where the deposit's wait ended was answered "failing": it ends the
      // route now (the deposit stays at the deposit address) instead of lingering until some later park.
      if (outcome === null || (decision?.kind === 'fail' && patched('fail-with-deposit'))) {
        scope.cancel();
        const failed = pending();
        throw new OperatorFailure(failed?.kind === 'fail' ? failed.reason : '');
      }
      if (outcome.funded) return true;

      const received = BigInt(outcome.balance);
      if (received === 0n) {
        await setStatus('FAILED', { error: `no deposit received by the deadline ${deadline}` });
        return false;
      }
      fundsReceived = true;
      const cause = `underpaid: received ${received} of ${plan.amount} by the deadline ${deadline}`;
      if (plan.refundAddress) {
        const refund = await runStep('refund-deposit', () => steps.refundDeposit({ routeId: plan.routeId, to: plan.refundAddress!, key: 'underpaid' }));
        await setStatus('FAILED', { error: `${cause}; refunded ${refund.amount} to ${plan.refundAddress} (tx ${refund.txHash})` });
        return false;
      }
      const taken = await park(
        'await-deposit',
        `${cause}; no refundAddress, so the deposit is held. retry = wait again for the full amount; fail = end the route`,
      );
      if (taken.kind === 'fail') throw new OperatorFailure(taken.reason);
      deadline = new Date(Date.now() + plan.settings.depositTimeoutSeconds * 1000).toISOString();
    }
  };

  /**
   * Still SHIELDED: waits until the pool approves the note and its anonymity set is reached (or it has waited
   * its longest), then the route's own random delay, so that its withdrawal follows neither its deposit nor the
   * deposit that completed its set at a predictable time (docs/privacy.md). Checks with a growing interval: the
   * first ones quickly, then about every fiftieth of the time waited, at least every pollSeconds.
   */
  const awaitPrivacy = (shieldedAt: number) =>
    runStep('privacy-wait', async () => {
      const { delaySeconds, minAnonymitySet, maxWaitSeconds, pollSeconds, reviewTimeoutSeconds } = plan.privacy;
      for (let check = 0; ; check++) {
        const status = await steps.privacyStatus({ routeId: plan.routeId });
        if (status.review === 'rejected') {
          throw failure('AspRejected', 'the ASP rejected the deposit into the pool; `fail` gives the note back to the hub account (ragequit)');
        }
        const waited = Date.now() - shieldedAt;
        if (status.review !== 'approved' && waited >= reviewTimeoutSeconds * 1000) {
          throw failure(
            'AspReviewTimeout',
            `the ASP has not approved the deposit after ${reviewTimeoutSeconds} s; \`retry\` waits again, \`fail\` gives the note back to the hub account (ragequit)`,
          );
        }
        if (status.review === 'approved' && (status.anonymitySet >= minAnonymitySet || waited >= maxWaitSeconds * 1000)) break;
        const interval = Math.min(2 ** check, Math.max(pollSeconds, waited / 50_000)) * 1000;
        const untilGiveUp = maxWaitSeconds * 1000 - waited;
        await sleep(status.review === 'approved' && untilGiveUp > 0 ? Math.min(interval, untilGiveUp) : interval);
      }
      await sleep((delaySeconds ?? 0) * 1000);
    });

  try {
    await setStatus('AWAITING_DEPOSIT');
    if (!(await awaitFullDeposit())) return 'FAILED';
    fundsReceived = true;

    await setStatus('BRIDGING_IN');
    const inbound = await bridgeLeg(
      'in',
      (generation) => steps.bridgeIn({ plan, generation }),
      (order, txHashes) =>
        steps.confirmDelivery({
          routeId: plan.routeId,
          leg: 'in',
          chainId: plan.hubChainId,
          token: plan.hubToken,
          recipient: plan.hubAccount,
          amount: order.amountOut,
          txHashes,
        }),
    );
    await setStatus('RECEIVED_ON_HUB');

    // Shield what actually arrived (at least the leg's guaranteed minimum), all of it the route's own. From here
    // a failure ragequits whatever the route has in the pool (even a deposit mined before it was recorded).
    inPool = true;
    const shielded = await runStep('shield', () => steps.shield({ plan, amount: inbound.delivery.amount }));
    await setStatus('SHIELDED');
    if (privacyRules) await awaitPrivacy(Date.now());

    // The withdrawal funds the bridge-out order itself (or pays the recipient, or the exit account that burns).
    const exit = await runStep('unshield', () => proving.unshield({ plan }));
    inPool = false;
    await setStatus('UNSHIELD_SENT');

    await setStatus('BRIDGING_OUT');
    const outbound = await bridgeLeg(
      'out',
      (generation) => (generation === 1 && exit.funded ? Promise.resolve(exit.funded) : steps.bridgeOut({ plan, generation })),
      (_order, txHashes) =>
        steps.confirmDelivery({
          routeId: plan.routeId,
          leg: 'out',
          chainId: plan.destChainId,
          token: plan.destToken,
          recipient: plan.recipient,
          amount: plan.quotedOutputAmount,
          txHashes,
        }),
    );
    await bookkeeping.recordServiceFee({
      routeId: plan.routeId,
      chainId: plan.hubChainId,
      token: plan.hubToken,
      shielded: shielded.noteValue,
      bridgedOut: outbound.order.amountIn,
    });
    step = null;
    await setStatus('COMPLETED', { payoutTxHash: outbound.delivery.txHash });
    return 'COMPLETED';
  } catch (error) {
    let cause =
      error instanceof OperatorFailure
        ? `failed by operator: ${error.message}`
        : isCancellation(error)
          ? 'cancelled in Temporal; see heldFunds for where the money is'
          : describeFailure(error);
    log.error('transfer failed', { routeId: plan.routeId, cause });
    // Runs even when the workflow was cancelled, so a cancelled transfer still records where its funds are.
    await CancellationScope.nonCancellable(async () => {
      // Sends of the route that no node has yet must not go out later (a refund would push them out first).
      if (patched('void-unsent-on-fail')) {
        await recovery.voidUnsentIntents({ routeId: plan.routeId }).catch((voidError: unknown) => {
          log.error('voiding unsent transactions failed; `routectl senders` lists them', { routeId: plan.routeId, error: describeFailure(voidError) });
        });
      }
      if (privacyRules && inPool) {
        const returned = await recovery.ragequit(plan).catch((ragequitError: unknown) => {
          log.error('ragequit failed; the note stays in the pool', { routeId: plan.routeId, error: describeFailure(ragequitError) });
          return null;
        });
        if (returned) cause += `; the pool note (${returned.amount}) went back to the hub account (ragequit)`;
      }
      const heldFunds = await bookkeeping.locateFunds(plan);
      await setStatus('FAILED', { error: cause, heldFunds });
    });
    return 'FAILED';
  }
}

/** The cause as operators see it (memo, projection); URLs lose their paths, which may hold RPC keys. */
function describeFailure(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return redactUrls(error.cause.message);
  return redactUrls(error instanceof Error ? error.message : String(error));
}
