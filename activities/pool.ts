import { log } from '@temporalio/activity';
import { sql } from 'drizzle-orm';
import { formatGwei, type Address } from 'viem';
import { aboveCeiling, feeCap, offeredFees } from '../src/chain/fees.ts';
import { sendsDeferred } from '../src/observability/metrics.ts';
import { tokenBalance } from '../src/chain/erc20.ts';
import { grossForNet, poolFee } from '../src/money/fees.ts';
import { partnerFeeReserve } from '../src/quote/partnerFees.ts';
import type { PoolNote, PoolWithdrawal, ProvingState } from '../src/providers/privacyPool.ts';
import type { PrivacyObservation } from '../src/domain/observations.ts';
import { classOfRoute, noteOfRoute, notesOfClasses, passClasses, recountClass } from './anonymitySets.ts';
import { reportedCount, setIfLeaving } from '../src/privacy/classSets.ts';
import { epochStart } from '../src/privacy/exitEpochs.ts';
import type { BridgeOrderRef, ExitEpoch, RoutePlan } from '../src/domain/plan.ts';
import { legMovers, outboundLeg } from './bridge.ts';
import { recordChangeNote } from '../src/income/changeNoteStore.ts';
import type { ActivityDeps } from './deps.ts';
import { ensureGas } from './gas.ts';
import { whileHeartbeating } from './heartbeat.ts';
import { assertPlanIsRecorded } from './planGuard.ts';
import { bookLegSend, type LegMover, type LegRequest, sleepHeartbeating } from './legs.ts';
import { recordLedger } from '../src/transfers/ledgerStore.ts';
import { writeStatus } from './projection.ts';
import type { StatusProjection } from '../src/domain/projection.ts';
import { failure } from '../src/failures.ts';
import { transferOf, updateTransfer } from '../src/transfers/transferStore.ts';
import { markWithdrawn, type PoolNoteRow, poolNoteOfRoute, recordPoolNote, updatePoolNote } from '../src/transfers/poolNoteStore.ts';

/** The withdrawal was not proved: its anonymity set fell below what the route waits for (peers left or the ASP's root lacks them). */
class AnonymitySetBelowMinimum extends Error {
  constructor(readonly anonymitySet: number) {
    super(`the anonymity set is ${anonymitySet}, below the route's minimum`);
  }
}

/** The withdrawal was not proved: its exit epoch (and the one after, its grace) had ended before its proof could start. */
class ExitEpochPassed extends Error {
  constructor() {
    super('the exit epoch the withdrawal was drawn for has passed');
  }
}

/** Why a withdrawal sent nothing and the route waits in the pool again (its note faces the next epochs' draws). */
export interface Deferral {
  reason: 'anonymity-set' | 'epoch-passed' | 'fee-ceiling';
  anonymitySet?: number;
  /** fee-ceiling: what the chain asked and the ceiling, in gwei. */
  feeGwei?: string;
  ceilingGwei?: string;
}

/** A route's note as recorded in pool_notes. */
function poolNoteOf(row: PoolNoteRow): PoolNote {
  return {
    asset: row.asset as Address,
    label: row.label,
    commitment: row.commitment,
    value: BigInt(row.value),
    txHash: row.txHash as `0x${string}`,
    blockNumber: BigInt(row.blockNumber),
    timestamp: Math.floor(row.depositedAt.getTime() / 1000),
  };
}

export function poolActivities(deps: ActivityDeps) {
  const movers = legMovers(deps);

  async function loadNote(routeId: string): Promise<(PoolNote & { withdrawn: boolean }) | null> {
    const row = await poolNoteOfRoute(deps.db, routeId);
    if (!row) return null;
    return { ...poolNoteOf(row), withdrawn: row.withdrawnAt !== null };
  }

  async function requireNote(routeId: string) {
    const note = await loadNote(routeId);
    if (!note) throw failure('PoolNoteMissing', `route ${routeId} has no note in the pool`);
    return note;
  }

  /** The partner's fee the route was quoted with (destination units), 0 when no partner's key created it. */
  async function quotedPartnerFee(routeId: string): Promise<bigint> {
    return BigInt((await transferOf(deps.db, routeId))?.partnerFeeAmount ?? '0');
  }

  /**
   * The route's note: as recorded, or recovered from its deposit transaction when that was mined but the
   * activity stopped before recording it. A deposit recorded but never mined stays unsent: a route that is
   * ending must not pay the pool's fee for nothing.
   */
  async function recordedNote(plan: Pick<RoutePlan, 'routeId' | 'hubToken'>) {
    const note = await loadNote(plan.routeId);
    if (note) return note;
    const deposited = await deps.pool.minedDeposit({ routeId: plan.routeId, asset: plan.hubToken });
    if (!deposited) return null;
    await insertNote(plan.routeId, deposited);
    return loadNote(plan.routeId);
  }

  /** Records the note with its class and its client's pseudonym in the class; the transfer forgets the client. */
  async function insertNote(routeId: string, note: PoolNote): Promise<void> {
    const { amountClass, clientTag, senderTag, voucherTag, voucherShareBps } = await classOfRoute(deps.db, routeId);
    await deps.db.transaction(async (tx) => {
      await recordPoolNote(tx, {
        routeId,
        asset: note.asset,
        label: note.label,
        commitment: note.commitment,
        value: note.value.toString(),
        amountClass,
        clientTag,
        senderTag,
        voucherTag,
        voucherShareBps,
        txHash: note.txHash,
        blockNumber: note.blockNumber.toString(),
        depositedAt: new Date(note.timestamp * 1000),
      });
      await updateTransfer(tx, routeId, { privacyClient: null, privacyVoucher: null });
    });
  }

  return {
    /** Deposits exactly what the bridge-in delivered to the route's hub account (never more: no other route's funds). */
    /** `projection`: the status written before the deposit (RECEIVED_ON_HUB); `shielded`: the one written once the note is recorded (SHIELDED). */
    async shield(input: { plan: RoutePlan; amount: string; projection?: StatusProjection; shielded?: StatusProjection }): Promise<{ noteValue: string }> {
      const { plan } = input;
      await assertPlanIsRecorded(deps, plan);
      await writeStatus(deps, input.projection);
      const { hub } = deps.keyring.routeAccounts(plan.accountIndex);
      const amount = BigInt(input.amount);
      if (!(await deps.sender.intent(plan.routeId, 'shield'))) {
        const balance = await tokenBalance(deps.chains, plan.hubChainId, plan.hubToken, hub.address);
        if (balance < amount) {
          throw failure('HubBalanceShort', `hub account holds ${balance}, expected ${amount} before the pool deposit`);
        }
      }
      await ensureGas(deps, plan.routeId, 'shield', plan.hubChainId, hub.address);
      const deposit = () => deps.pool.deposit({ routeId: plan.routeId, owner: hub, asset: plan.hubToken, amount, noteIndex: plan.accountIndex });
      const note = await finalDeposit(deps, plan.hubChainId, await deposit(), deposit);
      await insertNote(plan.routeId, note);
      await recordLedger(deps.db, {
        routeId: plan.routeId,
        kind: 'shielded',
        chainId: plan.hubChainId,
        token: plan.hubToken,
        amount: note.value.toString(),
        txHash: note.txHash,
      });
      await writeStatus(deps, input.shielded);
      return { noteValue: note.value.toString() };
    },

    /**
     * The route's own pass of the privacy gate (the watcher's, for its class only): its review, the set it would
     * leave with, and its exit once the lottery drew one.
     */
    async privacyStatus({ routeId }: { routeId: string }): Promise<PrivacyObservation> {
      const own = await noteOfRoute(deps.db, routeId);
      if (!own) throw failure('PoolNoteMissing', `route ${routeId} has no note in the pool`);
      const observed = await passClasses(deps.db, deps.pool, [own], deps.privacyRules);
      return observed.get(routeId) ?? { review: 'pending', anonymitySet: 1 };
    },

    /**
     * Withdraws from the route's note exactly what its bridge-out needs, straight to where it needs it: the
     * bridge order's deposit address (deposit-address mode; no exit account), the exit account that will burn
     * (burn-and-mint mode), or the recipient (when the hub is the destination). The withdrawal is relayed by
     * the account shared by all routes; the rest of the note stays in the pool as the service's change.
     * Returns the order the withdrawal funded, or null when the exit account still has to send it.
     * `sent`: the status to project once the withdrawal is mined (UNSHIELD_SENT).
     *
     * `requireAnonymitySet`: before anything is proved, the route's anonymity set is counted against the very trees
     * the proof will use; below this, nothing is proved or sent and the route is told to wait again (`deferred`).
     * The peers counted are recorded before the proof, and the set GET reports is counted from them.
     * `exitEpoch`: the exit epoch the route leaves in; only peers that could leave in it count (src/privacy/exitEpochs.ts).
     */
    async unshield({
      plan,
      sent,
      requireAnonymitySet = 1,
      exitEpoch,
    }: {
      plan: RoutePlan;
      sent?: StatusProjection;
      requireAnonymitySet?: number;
      exitEpoch?: ExitEpoch;
    }): Promise<{ funded: BridgeOrderRef | null; deferred?: Deferral }> {
      await assertPlanIsRecorded(deps, plan);
      const note = await requireNote(plan.routeId);
      const { withdrawalFeeBps } = await deps.pool.fees(note.asset);
      const deliverable = note.value - poolFee(note.value, withdrawalFeeBps);
      const leg = outboundLeg(deps, plan, 1, deliverable);
      const mover = movers.forLeg(leg);
      const destination = withdrawalDestination(mover, leg, note, withdrawalFeeBps, await quotedPartnerFee(plan.routeId), plan);
      const admit = admission(deps, plan, requireAnonymitySet, exitEpoch);
      const tooDear = await aboveFeeCeiling(deps, plan);
      if (tooDear) {
        // Nothing proved or sent: the route stays gated, and a later draw tries again (issue 34: a gas spike waits).
        await updatePoolNote(deps.db, plan.routeId, { exitAt: null, exitEpochAt: null });
        return { funded: null, deferred: tooDear };
      }
      let withdrawal: Awaited<ReturnType<typeof deps.pool.withdraw>>;
      try {
        withdrawal = await whileHeartbeating(deps.pool.withdraw({ routeId: plan.routeId, note, noteIndex: plan.accountIndex, destination, admit }));
      } catch (error) {
        const deferred: Deferral | null =
          error instanceof AnonymitySetBelowMinimum
            ? { reason: 'anonymity-set', anonymitySet: error.anonymitySet }
            : error instanceof ExitEpochPassed
              ? { reason: 'epoch-passed' }
              : null;
        if (!deferred) throw error;
        // Nothing was proved or sent: the route stays gated, and the next passes draw its exit anew.
        await updatePoolNote(deps.db, plan.routeId, { exitAt: null, exitEpochAt: null });
        return { funded: null, deferred };
      }
      // The withdrawal is signed (its first attempt is `unshield`), so the leg's recorded order is the one it
      // funded: the last one quoted, for the attempt that mined.
      const request = { ...leg, fundedBy: 'unshield' };
      const { order } = await mover.prepare(request);
      await bookWithdrawal(deps, plan, note, withdrawal);
      await writeStatus(deps, sent);

      if (order.kind === 'cctp') return { funded: null };
      const funded = order.kind === 'direct' ? { ...order, requestId: withdrawal.txHash } : order;
      await bookLegSend(deps, request, order.amountIn, withdrawal.txHash);
      return { funded };
    },

    /**
     * A failed route's unspent note goes back to its hub account (the original depositor), publicly: for a
     * deposit the ASP rejected, or any route an operator ends while its funds sit in the pool.
     */
    async ragequit(plan: Pick<RoutePlan, 'routeId' | 'accountIndex' | 'hubChainId' | 'hubToken'>): Promise<{ amount: string } | null> {
      const note = await recordedNote(plan);
      if (!note || note.withdrawn) return null;
      if (!(await deps.sender.intent(plan.routeId, 'ragequit'))) {
        // A withdrawal mined before the route ended (cancelled while unshielding): the note is spent and the
        // route's money is on its way out, not back. One recorded but not mined yet loses the race to the
        // ragequit (the nullifier is spent once) and reverts, spending nothing.
        if (await deps.pool.minedWithdrawal({ routeId: plan.routeId, asset: note.asset })) return null;
        if ((await deps.pool.unspent(note, plan.accountIndex)) === 0n) return null;
      }
      const { hub } = deps.keyring.routeAccounts(plan.accountIndex);
      await ensureGas(deps, plan.routeId, 'ragequit', plan.hubChainId, hub.address);
      const result = await whileHeartbeating(deps.pool.ragequit({ routeId: plan.routeId, owner: hub, note, noteIndex: plan.accountIndex }));
      // A ragequit that reverted because a withdrawal spent the note first: nothing came back.
      if (!result) return null;
      await updatePoolNote(deps.db, plan.routeId, { ragequitAt: sql`now()` });
      // A ragequit note was never spent by anyone's withdrawal: the class's reports are counted without it.
      await recountClass(deps.db, (await noteOfRoute(deps.db, plan.routeId))?.amountClass ?? null);
      await recordLedger(deps.db, {
        routeId: plan.routeId,
        kind: 'ragequit',
        chainId: plan.hubChainId,
        token: plan.hubToken,
        amount: result.amount.toString(),
        txHash: result.txHash,
      });
      return { amount: result.amount.toString() };
    },
  };
}

/**
 * A new withdrawal is not proved while the hub asks more per gas than its ceiling (FEE_CEILING_GWEI): the deferral
 * to return, logged and counted. One already signed (a recorded `unshield` attempt) is always settled: it may mine.
 */
async function aboveFeeCeiling(deps: ActivityDeps, plan: RoutePlan): Promise<Deferral | null> {
  const ceiling = deps.feeCeilingsWei?.[plan.hubChainId];
  // The withdrawal's first attempt is recorded as `unshield` (as ragequit's is `ragequit`).
  if (ceiling === undefined || (await deps.sender.intent(plan.routeId, 'unshield'))) return null;
  const fees = await offeredFees(deps.chains.publicClient(plan.hubChainId), deps.chains.chain(plan.hubChainId));
  if (!aboveCeiling(fees, ceiling)) return null;
  sendsDeferred.inc({ chain_id: String(plan.hubChainId), step: 'unshield' });
  const deferral: Deferral = { reason: 'fee-ceiling', feeGwei: formatGwei(feeCap(fees)), ceilingGwei: formatGwei(ceiling) };
  log.warn('withdrawal deferred: the hub asks more per gas than FEE_CEILING_GWEI', { routeId: plan.routeId, ...deferral });
  return deferral;
}

/**
 * Where the withdrawal pays and how much, asked for by the pool only when a new attempt is about to be proved (after
 * any wait for a prover, and again after an attempt that reverted): a fresh order, priced now, never one quoted
 * minutes ago.
 */
/** How long one shield waits in its activity for its deposit to be deep enough; then the step's retry waits on. */
const FINALITY_WAIT_MS = 45_000;

/**
 * The pool deposit once it is `confirmationsOf(hub)` blocks below the head, read again from the chain as it is then
 * (`again` settles the recorded sends and parses the canonical receipt): a reorg that moved it behind another
 * deposit (another label) or took it (the sender broadcasts it again) changes what is recorded, never a note the
 * chain no longer has. The note's label and commitment are what every proof and ragequit of the route uses.
 */
async function finalDeposit(deps: ActivityDeps, chainId: number, first: PoolNote, again: () => Promise<PoolNote>): Promise<PoolNote> {
  const depth = BigInt(deps.confirmationsOf?.(chainId) ?? 0);
  if (depth === 0n) return first;
  const client = deps.chains.publicClient(chainId);
  const giveUpAt = Date.now() + FINALITY_WAIT_MS;
  let note = first;
  for (;;) {
    const head = await client.getBlockNumber();
    if (note.blockNumber + depth <= head) {
      const now = await again();
      if (now.txHash === note.txHash && now.blockNumber === note.blockNumber && now.label === note.label) return now;
      note = now;
      continue;
    }
    if (Date.now() >= giveUpAt) {
      throw failure('AwaitingFinality', `the pool deposit is ${head - note.blockNumber} of ${depth} blocks deep; the step waits on`);
    }
    await sleepHeartbeating(deps.pollIntervalMs, { awaiting: 'finality', depth: Number(depth), block: Number(note.blockNumber) });
  }
}

function withdrawalDestination(
  mover: LegMover,
  leg: LegRequest,
  note: PoolNote,
  withdrawalFeeBps: number,
  partnerFee: bigint,
  plan: Pick<RoutePlan, 'quotedOutputAmount'>,
): () => Promise<{ to: Address; amount: bigint }> {
  return async () => {
    const { order, payTo } = await mover.prepare(leg);
    const gross = grossForNet(BigInt(order.amountIn), withdrawalFeeBps);
    // What the route owes its partner stays in the note too (in hub units at the order's own rate): a bridge-out
    // that would eat it is as refused as one the note cannot pay, so the service never books a fee it did not keep.
    const partnerReserve = partnerFeeReserve(partnerFee, BigInt(order.amountIn), BigInt(plan.quotedOutputAmount));
    if (gross + partnerReserve > note.value) {
      throw failure(
        'BridgeTooExpensive',
        `the bridge-out needs ${order.amountIn} (${gross} before the relay fee)${partnerReserve > 0n ? ` and the partner's fee ${partnerReserve}` : ''} but the pool note holds ${note.value}`,
      );
    }
    return { to: payTo, amount: gross };
  };
}

/**
 * The check the pool runs against the very trees a proof will use, before anything is proved: the route's set if it
 * withdrew now in its exit epoch, counted from the notes gated by then; below `requireAnonymitySet` nothing is proved
 * (AnonymitySetBelowMinimum), nor once the epoch and the one after it have ended (ExitEpochPassed: a proof that waited
 * that long for a prover leaves at a moment the lottery did not draw). The peers counted are recorded first, with the
 * epoch: the set GET reports is counted from them.
 */
function admission(deps: ActivityDeps, plan: RoutePlan, requireAnonymitySet: number, exitEpoch: ExitEpoch | undefined) {
  return async (state: ProvingState) => {
    if (exitEpoch && Date.now() >= exitEpoch.startsAt + 2 * exitEpoch.seconds * 1000) throw new ExitEpochPassed();
    const own = await noteOfRoute(deps.db, plan.routeId);
    const notes = own?.amountClass ? await notesOfClasses(deps.db, [own.amountClass]) : [];
    const view = { inState: (commitment: string) => state.commitments.has(commitment), approved: (label: string) => state.approvedLabels.has(label) };
    // A route from before exit epochs has none: it counts as leaving now.
    const exitEpochAt = exitEpoch?.startsAt ?? Date.now();
    const { members, count } = own
      ? setIfLeaving(own, notes, view, { exitEpochAt, amount: state.amount, leafCount: state.leafCount })
      : { members: [], count: { size: 1 } };
    // Past its longest wait a route leaves whatever its set, as its gate would have let it (else it could wait for ever).
    const longestWaitOver =
      own !== null && exitEpoch !== undefined && epochStart(own.depositedAt, exitEpoch.seconds) + plan.privacy.maxWaitSeconds * 1000 <= exitEpochAt;
    if (count.size < requireAnonymitySet && !longestWaitOver) throw new AnonymitySetBelowMinimum(count.size);
    await updatePoolNote(deps.db, plan.routeId, { anonymityMembers: members, provedLeaves: state.leafCount, exitEpochAt: new Date(exitEpochAt) });
  };
}

/**
 * Books a mined withdrawal: the note is spent, the route's reported set and wait are recorded (and the class's
 * other reports recounted: what this withdrawal tells an observer changes them), and the ledger gets what it delivered.
 */
async function bookWithdrawal(deps: ActivityDeps, plan: RoutePlan, note: PoolNote, withdrawal: PoolWithdrawal): Promise<void> {
  await markWithdrawn(deps.db, plan.routeId, new Date(withdrawal.timestamp * 1000));
  const own = await noteOfRoute(deps.db, plan.routeId);
  const set = own ? reportedCount(own, await notesOfClasses(deps.db, own.amountClass ? [own.amountClass] : [])).size : 1;
  await updateTransfer(deps.db, plan.routeId, {
    anonymitySet: set,
    privacyWaitedSeconds: Math.max(0, withdrawal.timestamp - note.timestamp),
    // Only a route past its longest wait leaves below its minimum (the gate and the proof's check see to that).
    privacyLeftAtMaxWait: set < plan.privacy.minAnonymitySet,
    updatedAt: sql`now()`,
  });
  await recountClass(deps.db, own?.amountClass ?? null);
  // What the withdrawal left in the pool is the service's income, collected later by income sweeps (src/income/).
  await recordChangeNote(deps.db, {
    routeId: plan.routeId,
    generation: 1,
    asset: note.asset,
    label: note.label,
    value: note.value - withdrawal.delivered - withdrawal.fee,
    leftAt: new Date(withdrawal.timestamp * 1000),
  });
  await recordLedger(deps.db, {
    routeId: plan.routeId,
    kind: 'unshielded',
    chainId: plan.hubChainId,
    token: plan.hubToken,
    amount: withdrawal.delivered.toString(),
    txHash: withdrawal.txHash,
  });
}
