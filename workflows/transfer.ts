import { defineSearchAttributeKey } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { TransferActivities } from '../activities/index.ts';
import type { StatusProjection } from '../activities/projection.ts';
import { redactUrls } from '../src/redact.ts';
import { depositObservedSignal, failUpdate, privacyObservedSignal, retryUpdate, stateQuery } from './definitions.ts';
import { SEARCH_ATTRIBUTES, taskQueues, type BridgeLeg, type BridgeOrderRef, type HeldFunds, type ParkedStep, type RoutePlan, type TransferStatus } from './types.ts';

const NON_RETRYABLE = ['BridgeRouteRejected', 'BridgeRefunded', 'BridgeFailed', 'DeliveryMismatch', 'TransactionRevertedError', 'NonceConsumedError'];

/**
 * Every activity heartbeats while it runs (src/temporal/activityKeepalive.ts), so one lost with its worker
 * (kill -9, OOM) is retried elsewhere after this long, not after its start-to-close timeout.
 */
const HEARTBEAT_TIMEOUT = '10 seconds';

/** A shielded route that heard nothing from the privacy watcher for this long asks the pool itself. */
const PRIVACY_RECHECK_MS = 10 * 60 * 1000;

const statusKey = defineSearchAttributeKey(SEARCH_ATTRIBUTES.status, 'KEYWORD');
const attentionKey = defineSearchAttributeKey(SEARCH_ATTRIBUTES.needsAttention, 'BOOL');

type Decision = { kind: 'retry' } | { kind: 'fail'; reason: string };

/** The operator ended the route. */
class OperatorFailure extends Error {}

/** The activities by what they do, each group on its task queue (taskQueues in workflows/types.ts) with its timeouts and retries. */
function activityGroups(plan: RoutePlan) {
  const queues = taskQueues(workflowInfo().taskQueue);
  // Once funds are received, a step that exhausts this budget parks the transfer for an operator.
  const stepBudget = {
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    scheduleToCloseTimeout: `${plan.settings.stepTimeBudgetSeconds} seconds`,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: plan.settings.stepMaxAttempts,
      nonRetryableErrorTypes: NON_RETRYABLE,
    },
  };
  return {
    /** Projections and ledger reads: never park a transfer, retried until they work. */
    bookkeeping: proxyActivities<TransferActivities>({
      taskQueue: queues.steps,
      startToCloseTimeout: '30 seconds',
      heartbeatTimeout: HEARTBEAT_TIMEOUT,
      retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
    }),
    /** Short steps that move money or read the chain. */
    steps: proxyActivities<TransferActivities>({ ...stepBudget, taskQueue: queues.steps, startToCloseTimeout: '2 minutes' }),
    /** The pool withdrawal: may queue behind other routes' proofs. */
    proving: proxyActivities<TransferActivities>({ ...stepBudget, taskQueue: queues.proofs, startToCloseTimeout: '30 minutes' }),
    /** Waits for a bridge fill. */
    waits: proxyActivities<TransferActivities>({ ...stepBudget, taskQueue: queues.waits, startToCloseTimeout: '3 hours' }),
    /** Gives a failed route's unspent pool note back to its hub account: a few tries, then the note is reported as held. */
    recovery: proxyActivities<TransferActivities>({
      taskQueue: queues.steps,
      startToCloseTimeout: '10 minutes',
      heartbeatTimeout: HEARTBEAT_TIMEOUT,
      retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
    }),
  };
}

/** What the workflow knows about its transfer; the handlers and the steps read and change it. */
class TransferProgress {
  status: TransferStatus = 'AWAITING_DEPOSIT';
  /** Sequence number of the last status (the API's row starts at 0 with AWAITING_DEPOSIT). */
  seq = 0;
  step: string | null = 'await-deposit';
  parked: ParkedStep | null = null;
  decision: Decision | null = null;
  fundsReceived = false;
  inPool = false;
  /** The deposit watcher's latest report: the deposit address's balance at a block. */
  deposit = { balance: 0n, blockNumber: -1 };
  /** The note's review and anonymity set, as the privacy watcher (or the route's own check) last saw them. */
  privacy: { review: 'pending' | 'approved' | 'rejected'; anonymitySet: number } = { review: 'pending', anonymitySet: 1 };
  /** Reports of the privacy watcher so far (a new one wakes the privacy wait). */
  privacyReports = 0;

  constructor(readonly routeId: string) {}

  /** The projection of the next status, to hand to the step that moves there; `reach` it once that step ran. */
  next(status: TransferStatus): StatusProjection {
    return { routeId: this.routeId, seq: this.seq + 1, status };
  }

  /**
   * The transfer is in `projection.status` now. The TransferStatus search attribute is updated only where the
   * transfer starts a longer wait (BRIDGING_IN, SHIELDED, BRIDGING_OUT, the end): each update is a billed
   * Temporal action, and the Postgres projection (the API's view) has every status anyway.
   */
  reach(projection: StatusProjection, { searchable }: { searchable: boolean }): StatusProjection {
    this.status = projection.status;
    this.seq = projection.seq;
    if (searchable) upsertSearchAttributes([{ key: statusKey, value: projection.status }]);
    return projection;
  }

  failure(): string {
    return (this.decision as { reason: string } | null)?.reason ?? '';
  }
}

/**
 * One transfer, workflow id = routeId (version 2; `transferWorkflow` in transferV1.ts finishes older ones):
 * await deposit → bridge in → shield → privacy wait → unshield → bridge out (exact output) → confirm payout.
 *
 * The deposit wait and the privacy wait are durable timers: the chain's deposit watcher signals what arrives
 * (activities/depositWatcher.ts) and the privacy watcher what the pool decides (activities/privacyWatcher.ts),
 * so a waiting transfer holds no activity slot and polls nothing. Each step projects the status it moved to
 * itself, so a status change costs no activity of its own.
 *
 * Once funds are received, a step that exhausts its retry budget parks the transfer (status kept,
 * NeedsAttention = true) until an operator sends the `retry` or `fail` update. It never fails on its own
 * while it holds funds. Deterministic orchestration only; every side effect is an activity.
 */
export async function transferWorkflowV2(plan: RoutePlan): Promise<TransferStatus> {
  const { bookkeeping, steps, proving, waits, recovery } = activityGroups(plan);
  const state = new TransferProgress(plan.routeId);

  setHandler(stateQuery, () => ({ status: state.status, step: state.step, parked: state.parked }));
  setHandler(depositObservedSignal, ({ balance, blockNumber }) => {
    if (blockNumber < state.deposit.blockNumber) return;
    state.deposit = { balance: BigInt(balance), blockNumber };
  });
  setHandler(privacyObservedSignal, (observation) => {
    state.privacy = observation;
    state.privacyReports += 1;
  });
  setHandler(
    retryUpdate,
    () => {
      state.decision = { kind: 'retry' };
      return `retrying ${state.parked?.step}`;
    },
    {
      validator: () => {
        if (!state.parked) throw new Error(`route is not parked (status ${state.status}); only a parked route can be retried`);
      },
    },
  );
  setHandler(
    failUpdate,
    ({ reason }) => {
      state.decision = { kind: 'fail', reason: reason.trim() };
      return 'failing';
    },
    {
      validator: (input) => {
        if (typeof input?.reason !== 'string' || !input.reason.trim()) throw new Error('a non-empty reason is required');
        if (!state.parked && state.status !== 'AWAITING_DEPOSIT') {
          throw new Error(`route is not parked (status ${state.status}, step ${state.step}); only a parked route or one still awaiting its deposit can be failed`);
        }
      },
    },
  );

  /** Ends the route: status FAILED, projected at once (no step follows to carry it). */
  const fail = async (extra: { error: string; heldFunds?: HeldFunds[] }) => {
    const failed = state.reach(state.next('FAILED'), { searchable: true });
    await bookkeeping.projectStatus({ ...failed, ...extra });
  };

  /** Waits for an operator decision, with the transfer visibly parked meanwhile. */
  const park = async (parkedStep: string, error: string): Promise<Decision> => {
    state.parked = { step: parkedStep, error, since: new Date().toISOString() };
    log.warn('transfer parked', { routeId: plan.routeId, ...state.parked });
    upsertSearchAttributes([{ key: attentionKey, value: true }]);
    upsertMemo({ parked: state.parked });
    setCurrentDetails(`**Parked** at \`${parkedStep}\` since ${state.parked.since}\n\n${error}\n\nOperator: \`routectl retry ${plan.routeId}\` or \`routectl fail ${plan.routeId} --reason "…"\``);
    await bookkeeping.projectAttention({ routeId: plan.routeId, parked: state.parked });
    await condition(() => state.decision !== null);
    const taken = state.decision as Decision | null;
    state.decision = null;
    state.parked = null;
    upsertSearchAttributes([{ key: attentionKey, value: false }]);
    upsertMemo({ parked: null });
    setCurrentDetails('');
    await bookkeeping.projectAttention({ routeId: plan.routeId, parked: null });
    log.info('operator decision', { routeId: plan.routeId, decision: taken?.kind });
    return taken ?? { kind: 'retry' };
  };

  /** Runs a step; once funds were received, a failure parks instead of failing, and `retry` runs it again. */
  const runStep = async <T>(name: string, body: () => Promise<T>): Promise<T> => {
    state.step = name;
    for (;;) {
      try {
        return await body();
      } catch (error) {
        if (!state.fundsReceived || isCancellation(error)) throw error;
        const taken = await park(name, describeFailure(error));
        if (taken.kind === 'fail') throw new OperatorFailure(taken.reason);
      }
    }
  };

  /** A bridge leg: place and fund the order, then wait for the fill and confirm it on chain (one activity). */
  const bridgeLeg = (leg: BridgeLeg, place: (generation: number) => Promise<BridgeOrderRef>, delivery: { projection?: StatusProjection; completion?: { seq: number; shielded: string } }) => {
    let generation = 1;
    return runStep(`bridge-${leg}`, async () => {
      try {
        const order = await place(generation);
        return { order, delivery: await waits.awaitDelivery({ plan, leg, order, ...delivery }) };
      } catch (error) {
        // A refunded or failed order is final: the next attempt opens a new order with the returned funds.
        const type = error instanceof ActivityFailure && error.cause instanceof ApplicationFailure ? error.cause.type : null;
        if (type === 'BridgeRefunded' || type === 'BridgeFailed') generation += 1;
        throw error;
      }
    });
  };

  /**
   * Deposit stage: the full amount by the deadline, or the documented underpayment policy. Returns what the
   * deposit address held when it was taken, or null when the route ended here.
   */
  const awaitFullDeposit = async (): Promise<bigint | null> => {
    const expected = BigInt(plan.amount);
    let deadline = Date.parse(plan.depositDeadline);
    for (;;) {
      state.step = 'await-deposit';
      await condition(() => state.deposit.balance >= expected || state.decision?.kind === 'fail', Math.max(0, deadline - Date.now()));
      // A `fail` ends the route now; a deposit that arrived meanwhile stays at the deposit address (stray-deposit check).
      if (state.decision?.kind === 'fail') throw new OperatorFailure(state.failure());
      // At the deadline the chain is asked once more: a deposit the watcher has not reported (lagging, or down) still counts.
      const received = state.deposit.balance >= expected ? state.deposit.balance : BigInt((await bookkeeping.depositBalance(plan)).balance);
      if (received >= expected) return received;

      if (received === 0n) {
        await fail({ error: `no deposit received by the deadline ${new Date(deadline).toISOString()}` });
        return null;
      }
      state.fundsReceived = true;
      const cause = `underpaid: received ${received} of ${plan.amount} by the deadline ${new Date(deadline).toISOString()}`;
      if (plan.refundAddress) {
        const refund = await runStep('refund-deposit', () => steps.refundDeposit({ routeId: plan.routeId, to: plan.refundAddress!, key: 'underpaid' }));
        await fail({ error: `${cause}; refunded ${refund.amount} to ${plan.refundAddress} (tx ${refund.txHash})` });
        return null;
      }
      const taken = await park('await-deposit', `${cause}; no refundAddress, so the deposit is held. retry = wait again for the full amount; fail = end the route`);
      if (taken.kind === 'fail') throw new OperatorFailure(taken.reason);
      deadline = Date.now() + plan.settings.depositTimeoutSeconds * 1000;
    }
  };

  /**
   * Still SHIELDED: waits until the pool approves the note and its anonymity set is reached (or it has waited
   * its longest), then the route's own random delay, so that its withdrawal follows neither its deposit nor the
   * deposit that completed its set at a predictable time (docs/privacy.md). The privacy watcher signals what
   * changes (activities/privacyWatcher.ts); when it has said nothing for PRIVACY_RECHECK_MS, or before the route
   * gives up on the review, the route asks the pool itself, so a watcher that is down delays a route but never
   * strands it.
   */
  const awaitPrivacy = (shieldedAt: number) =>
    runStep('privacy-wait', async () => {
      const { delaySeconds, minAnonymitySet, maxWaitSeconds, reviewTimeoutSeconds } = plan.privacy;
      let askedNow = false;
      for (;;) {
        const { review, anonymitySet } = state.privacy;
        if (review === 'rejected') {
          throw ApplicationFailure.nonRetryable('the ASP rejected the deposit into the pool; `fail` gives the note back to the hub account (ragequit)', 'AspRejected');
        }
        const waited = Date.now() - shieldedAt;
        if (review === 'approved' && (anonymitySet >= minAnonymitySet || waited >= maxWaitSeconds * 1000)) break;
        if (review !== 'approved' && waited >= reviewTimeoutSeconds * 1000) {
          if (!askedNow) {
            state.privacy = await steps.privacyStatus({ routeId: plan.routeId });
            askedNow = true;
            continue;
          }
          throw ApplicationFailure.nonRetryable(
            `the ASP has not approved the deposit after ${reviewTimeoutSeconds} s; \`retry\` waits again, \`fail\` gives the note back to the hub account (ragequit)`,
            'AspReviewTimeout',
          );
        }
        const untilGiveUp = (review === 'approved' ? maxWaitSeconds : reviewTimeoutSeconds) * 1000 - waited;
        const reports = state.privacyReports;
        const reported = await condition(() => state.privacyReports !== reports, Math.max(1, Math.min(PRIVACY_RECHECK_MS, untilGiveUp)));
        if (!reported && untilGiveUp > PRIVACY_RECHECK_MS) state.privacy = await steps.privacyStatus({ routeId: plan.routeId });
      }
      await sleep(delaySeconds * 1000);
    });

  try {
    const received = await awaitFullDeposit();
    if (received === null) return 'FAILED';
    state.fundsReceived = true;

    const bridgingIn = state.reach(state.next('BRIDGING_IN'), { searchable: true });
    const inbound = await bridgeLeg('in', (generation) => steps.bridgeIn({ plan, generation, received: received.toString(), projection: bridgingIn }), {});

    // Shield what actually arrived (at least the leg's guaranteed minimum), all of it the route's own. From here
    // a failure ragequits whatever the route has in the pool (even a deposit mined before it was recorded).
    const onHub = state.reach(state.next('RECEIVED_ON_HUB'), { searchable: false });
    state.inPool = true;
    const inPool = state.next('SHIELDED');
    const shielded = await runStep('shield', () => steps.shield({ plan, amount: inbound.delivery.amount, projection: onHub, shielded: inPool }));
    state.reach(inPool, { searchable: true });
    await awaitPrivacy(Date.now());

    // The withdrawal funds the bridge-out order itself (or pays the recipient, or the exit account that burns).
    const sent = state.next('UNSHIELD_SENT');
    const exit = await runStep('unshield', () => proving.unshield({ plan, sent }));
    state.inPool = false;
    state.reach(sent, { searchable: false });

    const bridgingOut = state.reach(state.next('BRIDGING_OUT'), { searchable: true });
    const completed = state.next('COMPLETED');
    await bridgeLeg(
      'out',
      (generation) => (generation === 1 && exit.funded ? Promise.resolve(exit.funded) : steps.bridgeOut({ plan, generation, projection: bridgingOut })),
      { projection: bridgingOut, completion: { seq: completed.seq, shielded: shielded.noteValue } },
    );
    state.step = null;
    state.reach(completed, { searchable: true });
    return 'COMPLETED';
  } catch (error) {
    let cause = error instanceof OperatorFailure
      ? `failed by operator: ${error.message}`
      : isCancellation(error)
        ? 'cancelled in Temporal; see heldFunds for where the money is'
        : describeFailure(error);
    log.error('transfer failed', { routeId: plan.routeId, cause });
    // Runs even when the workflow was cancelled, so a cancelled transfer still records where its funds are.
    await CancellationScope.nonCancellable(async () => {
      // Sends of the route that no node has yet must not go out later (a refund would push them out first).
      await recovery.voidUnsentIntents({ routeId: plan.routeId }).catch((voidError: unknown) => {
        log.error('voiding unsent transactions failed; `routectl senders` lists them', { routeId: plan.routeId, error: describeFailure(voidError) });
      });
      if (state.inPool) {
        const returned = await recovery.ragequit(plan).catch((ragequitError: unknown) => {
          log.error('ragequit failed; the note stays in the pool', { routeId: plan.routeId, error: describeFailure(ragequitError) });
          return null;
        });
        if (returned) cause += `; the pool note (${returned.amount}) went back to the hub account (ragequit)`;
      }
      await fail({ error: cause, heldFunds: await bookkeeping.locateFunds(plan) });
    });
    return 'FAILED';
  }
}

/** The cause as operators see it (memo, projection); URLs lose their paths, which may hold RPC keys. */
function describeFailure(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return redactUrls(error.cause.message);
  return redactUrls(error instanceof Error ? error.message : String(error));
}
