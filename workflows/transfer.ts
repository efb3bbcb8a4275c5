import { type ActivityOptions, ApplicationFailure, defineSearchAttributeKey } from '@temporalio/common';
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
  workflowInfo,
} from '@temporalio/workflow';
import type { TransferActivities } from '../activities/index.ts';
import type { StatusProjection } from '../src/domain/projection.ts';
import { failure, failureTypeOf } from '../src/failures.ts';
import { finalTypes, isFailureType } from '../src/domain/failures.ts';
import { epochStart, nextEpochStart } from '../src/privacy/exitEpochs.ts';
import { redactUrls } from '../src/redact.ts';
import { depositObservedSignal, failUpdate, privacyObservedSignal, retryUpdate, stateQuery } from './definitions.ts';
import { SEARCH_ATTRIBUTES, taskQueues } from './types.ts';
import type { BridgeLeg, BridgeOrderRef, ExitEpoch, RoutePlan } from '../src/domain/plan.ts';
import type { Address } from '../src/domain/address.ts';
import { ADDRESS_REUSE_REFUSED } from '../src/domain/funding.ts';
import type { HeldFunds, ParkedStep } from '../src/domain/heldFunds.ts';
import type { PrivacyObservation } from '../src/domain/observations.ts';
import type { TransferState, TransferStatus } from '../src/domain/status.ts';
import type { FailedAt } from '../src/domain/failureCodes.ts';

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
 * while it holds funds. A failed or cancelled transfer voids its unsent transactions, ragequits a note it still
 * has in the pool, and records where its funds are. Deterministic orchestration only; every side effect is an
 * activity.
 */
export async function transferWorkflowV2(plan: RoutePlan): Promise<TransferStatus> {
  const route = new TransferRoute(plan);
  try {
    const received = await route.awaitFullDeposit();
    if (received === null) return 'FAILED';
    if (await route.refuseLinkedFunding()) return 'FAILED';
    const inbound = await route.bridgeIn(received);
    const shielded = await route.shield(inbound.delivery.amount);
    const exit = await route.leavePool(Date.now());
    await route.bridgeOut(exit.funded, shielded.noteValue);
    return route.complete();
  } catch (error) {
    return route.fail(error);
  }
}

/**
 * Every activity heartbeats while it runs (src/temporal/activityKeepalive.ts), so one lost with its worker
 * (kill -9, OOM) is retried elsewhere after this long, not after its start-to-close timeout.
 */
const HEARTBEAT_TIMEOUT = '10 seconds';

/** A shielded route that heard nothing from the privacy watcher for this long asks the pool itself. */
const PRIVACY_RECHECK_MS = 10 * 60 * 1000;

/**
 * Patch: the withdrawal counts the route's anonymity set against the very trees it proves against and refuses below
 * the minimum the route waited for, which sends the route back to wait (histories before it have no such round).
 */
const ANONYMITY_SET_AT_PROOF = 'anonymity-set-at-proof';

/**
 * Patch: once a route may leave the pool it withdraws at a random moment of the next exit epoch, not after a delay of
 * its own from its trigger (histories before it sleep `delaySeconds`).
 */
const EXIT_EPOCHS = 'exit-epochs';

/**
 * Patch: the longest wait counts from the start of the exit epoch the note entered the pool in, so every note of a
 * class deposited within one epoch that waits its longest leaves in the same later epoch (histories before it count
 * from the deposit itself, and such routes left in the order they came).
 */
const MAX_WAIT_FROM_EPOCH = 'max-wait-from-epoch';

/**
 * Patch: a route that leaves at its longest wait tells its withdrawal so; its set then counts only the peers whose own
 * longest wait had also ended (an observer who saw the others wait through their chances counts them out).
 */
const MAX_WAIT_PEERS = 'max-wait-peers';

/**
 * Patch: the privacy watcher decides when a route leaves (src/privacy/gate.ts, src/privacy/exitLottery.ts) and tells it
 * the moment; the route sleeps until then and withdraws in that exit epoch. A deferred withdrawal waits for its next
 * draw. (Histories before it open their own gate and draw their moment in the next epoch themselves.)
 */
const EXIT_LOTTERY = 'exit-lottery';

/**
 * Patch: once funded, the route checks who funded it (activities/deposit.ts checkFunding); funded from its own recipient,
 * it is refunded before the pool and fails ADDRESS_REUSE_REFUSED (histories before it bridge in straight away).
 */
const ADDRESS_REUSE = 'address-reuse';

/**
 * Patch: a route an operator fails after a step of it parked tells the projection which step and failure type it parked
 * on (`failedAt`), so its failureCode names the cause (src/domain/failureCodes.ts); histories before it say only that
 * an operator failed it.
 */
const FAILED_AT = 'failed-at';

const statusKey = defineSearchAttributeKey(SEARCH_ATTRIBUTES.status, 'KEYWORD');
const attentionKey = defineSearchAttributeKey(SEARCH_ATTRIBUTES.needsAttention, 'BOOL');

/** Projections and ledger reads: never park a transfer, retried until they work. */
const bookkeepingOptions = (taskQueue: string): ActivityOptions => ({
  taskQueue,
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** A step's retry budget: once funds are received, a step that exhausts it parks the transfer for an operator. */
const stepBudget = (plan: RoutePlan): ActivityOptions => ({
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  scheduleToCloseTimeout: `${plan.settings.stepTimeBudgetSeconds} seconds`,
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: plan.settings.stepMaxAttempts,
    nonRetryableErrorTypes: finalTypes('transferStep'),
  },
});

/** Short steps that move money or read the chain. */
const stepOptions = (plan: RoutePlan, taskQueue: string): ActivityOptions => ({ ...stepBudget(plan), taskQueue, startToCloseTimeout: '2 minutes' });

/** The pool withdrawal: may queue behind other routes' proofs. */
const provingOptions = (plan: RoutePlan, taskQueue: string): ActivityOptions => ({ ...stepBudget(plan), taskQueue, startToCloseTimeout: '30 minutes' });

/** Waits for a bridge fill. */
const waitOptions = (plan: RoutePlan, taskQueue: string): ActivityOptions => ({ ...stepBudget(plan), taskQueue, startToCloseTimeout: '3 hours' });

/** Gives a failed route's unspent pool note back to its hub account: a few tries, then the note is reported as held. */
const recoveryOptions = (taskQueue: string): ActivityOptions => ({
  taskQueue,
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/** The activities by what they do, each group on its task queue (taskQueues in workflows/types.ts) with its options above. */
function activityGroups(plan: RoutePlan) {
  const queues = taskQueues(workflowInfo().taskQueue);
  return {
    bookkeeping: proxyActivities<TransferActivities>(bookkeepingOptions(queues.steps)),
    steps: proxyActivities<TransferActivities>(stepOptions(plan, queues.steps)),
    proving: proxyActivities<TransferActivities>(provingOptions(plan, queues.proofs)),
    waits: proxyActivities<TransferActivities>(waitOptions(plan, queues.waits)),
    recovery: proxyActivities<TransferActivities>(recoveryOptions(queues.steps)),
  };
}

type Decision = { kind: 'retry' } | { kind: 'fail'; reason: string };

/**
 * The status protocol: what a money-moving step (bridge in, shield, unshield, bridge out) records of the route's
 * status, and when. `atStart` is the status the route is in while the step runs: the step's first activity records
 * it as it begins (so the API shows it before the money moves). `onSuccess` is the status the step's success moves
 * the route to: the activity that moves the money records it in the same call, once the move is done (so no status
 * claims a move that did not happen, and none costs an activity of its own). The workflow keeps the same two in
 * memory (stepWithStatuses); `searchable` names those the TransferStatus search attribute follows. Their sequence
 * numbers are given out once, in order, by statusPlan.
 */
interface StatusPlan {
  atStart?: StatusProjection;
  onSuccess?: StatusProjection;
  searchable: ReadonlySet<'atStart' | 'onSuccess'>;
}

/** The operator ended the route; `failedAt`: the parked step it ended it on, if it was parked. */
class OperatorFailure extends Error {
  constructor(
    reason: string,
    readonly failedAt: FailedAt | null = null,
  ) {
    super(reason);
  }
}

/**
 * One route's workflow state and what changes it: the signal, update and query handlers (installed by the
 * constructor) and the steps, in the order transferWorkflowV2 runs them.
 */
class TransferRoute {
  status: TransferStatus = 'AWAITING_DEPOSIT';
  /** Sequence number of the last status (the API's row starts at 0 with AWAITING_DEPOSIT). */
  seq = 0;
  step: string | null = 'await-deposit';
  parked: ParkedStep | null = null;
  /** An operator's answer not yet acted on. */
  decision: Decision | null = null;
  fundsReceived = false;
  inPool = false;
  /** The deposit watcher's latest report: the deposit address's balance at a block. */
  deposit = { balance: 0n, blockNumber: -1 };
  /** The note's review and anonymity set, as the privacy watcher (or the route's own check) last saw them. */
  privacy: PrivacyObservation = { review: 'pending', anonymitySet: 1 };
  /** Reports of the privacy watcher so far (a new one wakes the privacy wait). */
  privacyReports = 0;
  /** The exit epoch of the last withdrawal that was deferred: an exit drawn for it or before is spent. */
  deferredEpoch = Number.NEGATIVE_INFINITY;

  private readonly activities: ReturnType<typeof activityGroups>;

  constructor(private readonly plan: RoutePlan) {
    this.activities = activityGroups(plan);
    setHandler(stateQuery, (): TransferState => ({ status: this.status, step: this.step, parked: this.parked }));
    setHandler(depositObservedSignal, ({ balance, blockNumber }) => {
      if (blockNumber < this.deposit.blockNumber) return;
      this.deposit = { balance: BigInt(balance), blockNumber };
    });
    setHandler(privacyObservedSignal, (observation) => {
      this.privacy = observation;
      this.privacyReports += 1;
    });
    setHandler(
      retryUpdate,
      () => {
        this.decision = { kind: 'retry' };
        return `retrying ${this.parked?.step}`;
      },
      {
        validator: () => {
          if (!this.parked) throw new Error(`route is not parked (status ${this.status}); only a parked route can be retried`);
        },
      },
    );
    setHandler(
      failUpdate,
      ({ reason }) => {
        this.decision = { kind: 'fail', reason: reason.trim() };
        return 'failing';
      },
      {
        validator: (input) => {
          if (typeof input?.reason !== 'string' || !input.reason.trim()) throw new Error('a non-empty reason is required');
          if (!this.parked && this.status !== 'AWAITING_DEPOSIT') {
            throw new Error(
              `route is not parked (status ${this.status}, step ${this.step}); only a parked route or one still awaiting its deposit can be failed`,
            );
          }
        },
      },
    );
  }

  /**
   * Deposit stage: the full amount by the deadline, or the documented underpayment policy. Returns what the
   * deposit address held when it was taken (the route holds funds from then on), or null when the route ended here.
   */
  async awaitFullDeposit(): Promise<bigint | null> {
    const { plan } = this;
    const expected = BigInt(plan.amount);
    let deadline = Date.parse(plan.depositDeadline);
    for (;;) {
      this.step = 'await-deposit';
      await condition(() => this.deposit.balance >= expected || this.decision?.kind === 'fail', Math.max(0, deadline - Date.now()));
      // A `fail` ends the route now; a deposit that arrived meanwhile stays at the deposit address (stray-deposit check).
      if (this.decision?.kind === 'fail') throw new OperatorFailure(this.decision.reason);
      // At the deadline the chain is asked once more: a deposit the watcher has not reported (lagging, or down) still counts.
      const received = this.deposit.balance >= expected ? this.deposit.balance : BigInt((await this.activities.bookkeeping.depositBalance(plan)).balance);
      if (received >= expected) {
        this.fundsReceived = true;
        return received;
      }

      if (received === 0n) {
        await this.project('FAILED', { error: `no deposit received by the deadline ${new Date(deadline).toISOString()}` });
        return null;
      }
      this.fundsReceived = true;
      const cause = `underpaid: received ${received} of ${plan.amount} by the deadline ${new Date(deadline).toISOString()}`;
      const { refundAddress } = plan;
      if (refundAddress) {
        const refund = await this.runStep('refund-deposit', () =>
          this.activities.steps.refundDeposit({ routeId: plan.routeId, to: refundAddress, key: 'underpaid' }),
        );
        await this.project('FAILED', { error: `${cause}; refunded ${refund.amount} to ${refundAddress} (tx ${refund.txHash})` });
        return null;
      }
      const taken = await this.park(
        'await-deposit',
        `${cause}; no refundAddress, so the deposit is held. retry = wait again for the full amount; fail = end the route`,
      );
      if (taken.kind === 'fail') throw new OperatorFailure(taken.reason, { step: 'await-deposit', failureType: null });
      deadline = Date.now() + plan.settings.depositTimeoutSeconds * 1000;
    }
  }

  /**
   * A route funded from the address it pays is linked for anyone who looks ("deposit from A, payout to A"): no pool
   * hides that, and as a peer it would only inflate others' sets. It is refunded (to its refundAddress, else back to the
   * address that sent it) and fails before the pool. Returns whether it was.
   */
  async refuseLinkedFunding(): Promise<boolean> {
    if (!patched(ADDRESS_REUSE)) return false;
    const { plan } = this;
    const funding = await this.runStep('check-funding', () => this.activities.steps.checkFunding(plan));
    if (!funding.reusedAddress) return false;
    const to = plan.refundAddress ?? (funding.reusedAddress as Address);
    const refund = await this.runStep('refund-deposit', () => this.activities.steps.refundDeposit({ routeId: plan.routeId, to, key: 'address-reuse' }));
    await this.project('FAILED', {
      error: `${ADDRESS_REUSE_REFUSED}: the deposit came from the recipient ${plan.recipient}, which links the payout to it for anyone; refunded ${refund.amount} to ${to} (tx ${refund.txHash}) before the pool. Fund a route from an address with no tie to its recipient`,
    });
    return true;
  }

  /** Bridge in: what the deposit address received, to the route's hub account. */
  bridgeIn(received: bigint) {
    const { plan } = this;
    const statuses = this.statusPlan({ atStart: 'BRIDGING_IN', searchable: ['atStart'] });
    return this.bridgeLeg('in', statuses, ({ atStart }) => ({
      place: (generation) => this.activities.steps.bridgeIn({ plan, generation, received: received.toString(), projection: atStart }),
      delivery: {},
    }));
  }

  /**
   * Shields what actually arrived (at least the leg's guaranteed minimum), all of it the route's own. From here
   * a failure ragequits whatever the route has in the pool (even a deposit mined before it was recorded).
   */
  async shield(amount: string) {
    const { plan } = this;
    const statuses = this.statusPlan({ atStart: 'RECEIVED_ON_HUB', onSuccess: 'SHIELDED', searchable: ['onSuccess'] });
    return this.stepWithStatuses('shield', statuses, ({ atStart, onSuccess }) => {
      this.inPool = true;
      return this.activities.steps.shield({ plan, amount, projection: atStart, shielded: onSuccess });
    });
  }

  /**
   * Waits for the privacy gate, then withdraws; when the withdrawal finds the set below the minimum at the very roots
   * it would prove against (peers left, or the ASP's root lacks them), nothing is sent and the route waits again.
   * A route that waited its longest leaves with what it has (and GET says so).
   */
  async leavePool(shieldedAt: number) {
    const { plan } = this;
    const lottery = plan.privacy.exitEpochSeconds !== undefined && patched(EXIT_LOTTERY);
    for (;;) {
      const { gate, exitEpoch } = lottery ? await this.awaitExit() : await this.awaitPrivacy(shieldedAt);
      const requireAnonymitySet = patched(ANONYMITY_SET_AT_PROOF) ? (gate === 'set-reached' ? plan.privacy.minAnonymitySet : 1) : undefined;
      // Leaving at its longest wait, the route counts only peers that could be leaving with it (MAX_WAIT_PEERS).
      const leaving = !lottery && exitEpoch && gate === 'max-wait' && patched(MAX_WAIT_PEERS) ? { ...exitEpoch, atLongestWait: true } : exitEpoch;
      const exit = await this.unshield(requireAnonymitySet, leaving);
      if (!exit.deferred) return exit;
      log.info('withdrawal deferred: the route waits in the pool again', { routeId: plan.routeId, ...exit.deferred });
      if (lottery) {
        // The watcher draws the route's exit again from the next epochs on.
        this.deferredEpoch = exitEpoch?.startsAt ?? this.deferredEpoch;
        continue;
      }
      // Heard from the withdrawal itself: the gate waits for the set again (the watcher, or the route's own check, says when).
      await sleep(plan.privacy.pollSeconds * 1000);
      this.privacy = await this.activities.bookkeeping.privacyStatus({ routeId: plan.routeId });
    }
  }

  /**
   * Still SHIELDED: waits until the privacy watcher draws the route's exit (its gate opened and the class's exit
   * lottery picked it for an epoch: docs/privacy.md, "Timing"), then sleeps until that moment. When the watcher has
   * said nothing for PRIVACY_RECHECK_MS, or before the route gives up on the review, the route runs the gate's pass
   * itself, so a watcher that is down delays a route but never strands it.
   */
  awaitExit(): Promise<{ gate: 'set-reached' | 'max-wait'; exitEpoch: ExitEpoch }> {
    const { plan } = this;
    return this.runStep('privacy-wait', async () => {
      const { reviewTimeoutSeconds } = plan.privacy;
      const since = Date.now();
      let askedNow = false;
      for (;;) {
        const { review, exit } = this.privacy;
        if (review === 'rejected')
          throw failure('AspRejected', 'the ASP rejected the deposit into the pool; `fail` gives the note back to the hub account (ragequit)');
        if (exit && exit.epochStartsAt > this.deferredEpoch) {
          await sleep(Math.max(0, exit.at - Date.now()));
          return { gate: exit.gate, exitEpoch: { startsAt: exit.epochStartsAt, seconds: exit.epochSeconds } };
        }
        const waited = Date.now() - since;
        if (review !== 'approved' && waited >= reviewTimeoutSeconds * 1000) {
          if (!askedNow) {
            this.privacy = await this.activities.steps.privacyStatus({ routeId: plan.routeId });
            askedNow = true;
            continue;
          }
          throw failure(
            'AspReviewTimeout',
            `the ASP has not approved the deposit after ${reviewTimeoutSeconds} s; \`retry\` waits again, \`fail\` gives the note back to the hub account (ragequit)`,
          );
        }
        const untilGiveUp = review === 'approved' ? Number.POSITIVE_INFINITY : reviewTimeoutSeconds * 1000 - waited;
        const reports = this.privacyReports;
        const reported = await condition(() => this.privacyReports !== reports, Math.max(1, Math.min(PRIVACY_RECHECK_MS, untilGiveUp)));
        if (!reported && untilGiveUp > PRIVACY_RECHECK_MS) this.privacy = await this.activities.steps.privacyStatus({ routeId: plan.routeId });
      }
    });
  }

  /**
   * Still SHIELDED: waits until the pool approves the note and its anonymity set is reached (or it has waited
   * its longest), then for its moment in the next exit epoch (`leaveInNextEpoch`), so that its withdrawal tells
   * nothing finer than the epoch in which it could leave (docs/privacy.md, "Exit epochs"). The privacy watcher signals what
   * changes (activities/privacyWatcher.ts); when it has said nothing for PRIVACY_RECHECK_MS, or before the route
   * gives up on the review, the route asks the pool itself, so a watcher that is down delays a route but never
   * strands it. Says why the gate opened (the set was reached, or the route waited its longest) and the exit epoch.
   */
  awaitPrivacy(shieldedAt: number): Promise<{ gate: 'set-reached' | 'max-wait'; exitEpoch?: ExitEpoch }> {
    const { plan } = this;
    return this.runStep('privacy-wait', async () => {
      const { minAnonymitySet, maxWaitSeconds, reviewTimeoutSeconds, exitEpochSeconds } = plan.privacy;
      const waitFrom = exitEpochSeconds !== undefined && patched(MAX_WAIT_FROM_EPOCH) ? epochStart(shieldedAt, exitEpochSeconds) : shieldedAt;
      let askedNow = false;
      for (;;) {
        const { review, anonymitySet } = this.privacy;
        if (review === 'rejected')
          throw failure('AspRejected', 'the ASP rejected the deposit into the pool; `fail` gives the note back to the hub account (ragequit)');
        const waited = Date.now() - waitFrom;
        // The longest wait first: a route that waited it leaves with what it has, even when the gate saw its set
        // reached but the withdrawal, counting against its exact roots, did not.
        if (review === 'approved' && waited >= maxWaitSeconds * 1000) return { gate: 'max-wait', ...(await this.leaveInNextEpoch()) };
        if (review === 'approved' && anonymitySet >= minAnonymitySet) return { gate: 'set-reached', ...(await this.leaveInNextEpoch()) };
        if (review !== 'approved' && waited >= reviewTimeoutSeconds * 1000) {
          if (!askedNow) {
            this.privacy = await this.activities.steps.privacyStatus({ routeId: plan.routeId });
            askedNow = true;
            continue;
          }
          throw failure(
            'AspReviewTimeout',
            `the ASP has not approved the deposit after ${reviewTimeoutSeconds} s; \`retry\` waits again, \`fail\` gives the note back to the hub account (ragequit)`,
          );
        }
        const untilGiveUp = (review === 'approved' ? maxWaitSeconds : reviewTimeoutSeconds) * 1000 - waited;
        const reports = this.privacyReports;
        const reported = await condition(() => this.privacyReports !== reports, Math.max(1, Math.min(PRIVACY_RECHECK_MS, untilGiveUp)));
        if (!reported && untilGiveUp > PRIVACY_RECHECK_MS) this.privacy = await this.activities.steps.privacyStatus({ routeId: plan.routeId });
      }
    });
  }

  /**
   * The route may leave: it sleeps until a uniformly random moment of the next exit epoch (epochs of
   * `exitEpochSeconds` on the clock), so every route that could leave within one epoch leaves within the next, in
   * random order. Routes created before exit epochs sleep their own delay instead.
   */
  private async leaveInNextEpoch(): Promise<{ exitEpoch?: ExitEpoch }> {
    const { exitEpochSeconds, delaySeconds } = this.plan.privacy;
    if (!patched(EXIT_EPOCHS) || exitEpochSeconds === undefined) {
      await sleep((delaySeconds ?? 0) * 1000);
      return {};
    }
    const now = Date.now();
    const startsAt = nextEpochStart(now, exitEpochSeconds);
    // Workflow Math.random: seeded per run by the server, so replays draw the same moment.
    await sleep(startsAt - now + Math.floor(Math.random() * exitEpochSeconds * 1000));
    return { exitEpoch: { startsAt, seconds: exitEpochSeconds } };
  }

  /**
   * The withdrawal: it funds the bridge-out order itself (or pays the recipient, or the exit account that burns).
   * `deferred`: the set at proof time was below `requireAnonymitySet`; nothing was sent.
   */
  async unshield(requireAnonymitySet?: number, exitEpoch?: ExitEpoch) {
    const { plan } = this;
    const statuses = this.statusPlan({ onSuccess: 'UNSHIELD_SENT', searchable: [] });
    const exit = await this.stepWithStatuses(
      'unshield',
      statuses,
      ({ onSuccess }) =>
        this.activities.proving.unshield({
          plan,
          sent: onSuccess,
          ...(requireAnonymitySet !== undefined && { requireAnonymitySet }),
          ...(exitEpoch !== undefined && { exitEpoch }),
        }),
      // A withdrawal deferred for its anonymity set sent nothing: the route stays in the pool, in SHIELDED.
      (result) => !result.deferred,
    );
    if (!exit.deferred) this.inPool = false;
    return exit;
  }

  /** Bridge out, exact output to the recipient; `funded`: the order the withdrawal already paid (first generation only). */
  bridgeOut(funded: BridgeOrderRef | null | undefined, shieldedValue: string) {
    const { plan } = this;
    const statuses = this.statusPlan({ atStart: 'BRIDGING_OUT', onSuccess: 'COMPLETED', searchable: ['atStart', 'onSuccess'] });
    return this.bridgeLeg('out', statuses, ({ atStart, onSuccess }) => ({
      place: (generation) =>
        generation === 1 && funded ? Promise.resolve(funded) : this.activities.steps.bridgeOut({ plan, generation, projection: atStart }),
      delivery: { projection: atStart, completion: { seq: onSuccess!.seq, shielded: shieldedValue } },
    }));
  }

  /** The bridge-out's delivery recorded COMPLETED (its status plan's onSuccess): the route has no step left. */
  complete(): TransferStatus {
    this.step = null;
    return 'COMPLETED';
  }

  /**
   * Ends the route on a failure, an operator's `fail` or a cancellation. Runs even when the workflow was cancelled,
   * so a cancelled transfer still records where its funds are.
   */
  async fail(error: unknown): Promise<TransferStatus> {
    const { plan } = this;
    const { bookkeeping, recovery } = this.activities;
    let cause =
      error instanceof OperatorFailure
        ? `failed by operator: ${error.message}`
        : isCancellation(error)
          ? 'cancelled in Temporal; see heldFunds for where the money is'
          : describeFailure(error);
    log.error('transfer failed', { routeId: plan.routeId, cause });
    await CancellationScope.nonCancellable(async () => {
      // Sends of the route that no node has yet must not go out later (a refund would push them out first).
      await recovery.voidUnsentIntents({ routeId: plan.routeId }).catch((voidError: unknown) => {
        log.error('voiding unsent transactions failed; `routectl senders` lists them', { routeId: plan.routeId, error: describeFailure(voidError) });
      });
      if (this.inPool) {
        const returned = await recovery.ragequit(plan).catch((ragequitError: unknown) => {
          log.error('ragequit failed; the note stays in the pool', { routeId: plan.routeId, error: describeFailure(ragequitError) });
          return null;
        });
        if (returned) cause += `; the pool note (${returned.amount}) went back to the hub account (ragequit)`;
      }
      const heldFunds = await bookkeeping.locateFunds(plan);
      const failedAt = error instanceof OperatorFailure && error.failedAt && patched(FAILED_AT) ? error.failedAt : undefined;
      await this.project('FAILED', { error: cause, heldFunds, ...(failedAt && { failedAt }) });
    });
    return 'FAILED';
  }

  /** The projection of the next status, to hand to the step that moves there; `reach` it once that step ran. */
  private next(status: TransferStatus): StatusProjection {
    return { routeId: this.plan.routeId, seq: this.seq + 1, status };
  }

  /** A money-moving step's status plan (see StatusPlan): the statuses with their sequence numbers, in order. */
  private statusPlan(wanted: { atStart?: TransferStatus; onSuccess?: TransferStatus; searchable: ('atStart' | 'onSuccess')[] }): StatusPlan {
    const atStart = wanted.atStart ? this.next(wanted.atStart) : undefined;
    const onSuccess = wanted.onSuccess ? { routeId: this.plan.routeId, seq: (atStart?.seq ?? this.seq) + 1, status: wanted.onSuccess } : undefined;
    return { atStart, onSuccess, searchable: new Set(wanted.searchable) };
  }

  /**
   * Runs a money-moving step under its status plan: the route is in `atStart` while the step runs and in `onSuccess`
   * once it succeeded (`moved` tells a success that moved nothing), in memory exactly as the step's activities record
   * them in the projection.
   */
  private async stepWithStatuses<T>(
    name: string,
    statuses: StatusPlan,
    body: (statuses: StatusPlan) => Promise<T>,
    moved: (result: T) => boolean = () => true,
  ): Promise<T> {
    if (statuses.atStart) this.reach(statuses.atStart, { searchable: statuses.searchable.has('atStart') });
    const result = await this.runStep(name, () => body(statuses));
    if (statuses.onSuccess && moved(result)) this.reach(statuses.onSuccess, { searchable: statuses.searchable.has('onSuccess') });
    return result;
  }

  /**
   * The transfer is in `projection.status` now. The TransferStatus search attribute is updated only where the
   * transfer starts a longer wait (BRIDGING_IN, SHIELDED, BRIDGING_OUT, the end): each update is a billed
   * Temporal action, and the Postgres projection (the API's view) has every status anyway.
   */
  private reach(projection: StatusProjection, { searchable }: { searchable: boolean }): StatusProjection {
    this.status = projection.status;
    this.seq = projection.seq;
    if (searchable) upsertSearchAttributes([{ key: statusKey, value: projection.status }]);
    return projection;
  }

  /** Moves to a final status no step follows to carry it: projected at once. */
  private async project(status: 'FAILED', extra: { error: string; heldFunds?: HeldFunds[]; failedAt?: FailedAt }): Promise<void> {
    const projection = this.reach(this.next(status), { searchable: true });
    await this.activities.bookkeeping.projectStatus({ ...projection, ...extra });
  }

  /** Waits for an operator decision, with the transfer visibly parked meanwhile. */
  private async park(step: string, error: string): Promise<Decision> {
    const { routeId } = this.plan;
    const { bookkeeping } = this.activities;
    const parked: ParkedStep = { step, error, since: new Date().toISOString() };
    this.parked = parked;
    log.warn('transfer parked', { routeId, ...parked });
    upsertSearchAttributes([{ key: attentionKey, value: true }]);
    upsertMemo({ parked });
    setCurrentDetails(
      `**Parked** at \`${step}\` since ${parked.since}\n\n${error}\n\nOperator: \`routectl retry ${routeId}\` or \`routectl fail ${routeId} --reason "…"\``,
    );
    await bookkeeping.projectAttention({ routeId, parked });
    await condition(() => this.decision !== null);
    const taken = this.decision ?? { kind: 'retry' };
    this.decision = null;
    this.parked = null;
    upsertSearchAttributes([{ key: attentionKey, value: false }]);
    upsertMemo({ parked: null });
    setCurrentDetails('');
    await bookkeeping.projectAttention({ routeId, parked: null });
    log.info('operator decision', { routeId, decision: taken.kind });
    return taken;
  }

  /** Runs a step; once funds were received, a failure parks instead of failing, and `retry` runs it again. */
  private async runStep<T>(name: string, body: () => Promise<T>): Promise<T> {
    this.step = name;
    for (;;) {
      try {
        return await body();
      } catch (error) {
        if (!this.fundsReceived || isCancellation(error)) throw error;
        const taken = await this.park(name, describeFailure(error));
        if (taken.kind === 'fail') throw new OperatorFailure(taken.reason, { step: name, failureType: cataloguedTypeOf(error) });
      }
    }
  }

  /** A bridge leg: place and fund the order, then wait for the fill and confirm it on chain (one activity). */
  private bridgeLeg(
    leg: BridgeLeg,
    statuses: StatusPlan,
    steps: (statuses: StatusPlan) => {
      place: (generation: number) => Promise<BridgeOrderRef>;
      delivery: { projection?: StatusProjection; completion?: { seq: number; shielded: string } };
    },
  ) {
    const { plan } = this;
    let generation = 1;
    return this.stepWithStatuses(`bridge-${leg}`, statuses, async (planned) => {
      const { place, delivery } = steps(planned);
      try {
        const order = await place(generation);
        return { order, delivery: await this.activities.waits.awaitDelivery({ plan, leg, order, ...delivery }) };
      } catch (error) {
        // A refunded or failed order is final: the next attempt opens a new order with the returned funds.
        const type = failureTypeOf(error);
        if (type === 'BridgeRefunded' || type === 'BridgeFailed') generation += 1;
        throw error;
      }
    });
  }
}

/**
 * The catalogued type (src/domain/failures.ts) of an activity's failure or of one the workflow threw itself (the
 * privacy wait's AspRejected); null for others: a bare Error's name says nothing of the cause.
 */
function cataloguedTypeOf(error: unknown): string | null {
  const type = error instanceof ApplicationFailure ? (error.type ?? null) : failureTypeOf(error);
  return isFailureType(type) ? type : null;
}

/** The cause as operators see it (memo, projection); URLs lose their paths, which may hold RPC keys. */
function describeFailure(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return redactUrls(error.cause.message);
  return redactUrls(error instanceof Error ? error.message : String(error));
}
