import { randomInt } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { and, eq, like, notLike } from 'drizzle-orm';
import { erc20Abi, getAddress, parseEventLogs, type Address, type Hex, type LocalAccount, type TransactionReceipt } from 'viem';
import { isNativeToken, NATIVE_TOKEN, paymentCall, tokenBalance } from '../src/chain/erc20.ts';
import { nativeUserBalance } from './nativeFunds.ts';
import { IntentVoidedError, TransactionRevertedError } from '../src/chain/txSender.ts';
import { operatorActions, txIntents } from '../src/db/schema.ts';
import { formatAmount } from '../src/money/amount.ts';
import { destinationRefusal, finishAction, refuseAction, requireRequestedAction } from '../src/operators/audit.ts';
import type { HeldFunds } from '../src/domain/heldFunds.ts';
import type { RoutePlan } from '../src/domain/plan.ts';
import { exitAddressOf, type ActivityDeps } from './deps.ts';
import { ensureGas } from './gas.ts';
import { entryKeyOf, ledgerOfRoute, recordLedger } from '../src/transfers/ledgerStore.ts';
import { depositTokenToRefund } from './strays.ts';
import { belowRefundMinimum, PAST_DEPOSIT } from './refundRules.ts';
import { failure } from '../src/failures.ts';
import { isTerminalStatus } from '../src/domain/status.ts';
import { type Transfer, transferOf } from '../src/transfers/transferStore.ts';
import { poolNoteOfRoute } from '../src/transfers/poolNoteStore.ts';
import { fundingOfRoute } from '../src/transfers/depositTransferStore.ts';
import { reusedAddress } from '../src/domain/funding.ts';

/** The pause between locateFunds' bursts of reads. */
const READ_PAUSE_MS = { min: 1_000, max: 5_000 };

/**
 * Whether a route's exit account may hold anything: only once its note left the pool (booked as withdrawn, or no
 * longer in the pool on chain: a withdrawal not booked yet, or a ragequit). Before, the exit account was never paid.
 */
export function mayHoldExit(note: { withdrawnAt: Date | null } | null | undefined, pooled: bigint): boolean {
  return !!note && (note.withdrawnAt !== null || pooled === 0n);
}

export function fundsActivities(deps: ActivityDeps) {
  return {
    /**
     * Where the route's money is now: its deposit, hub and exit accounts and its unspent pool note. Read-only.
     * Three bursts, a random pause apart: the deposit side (deposit address, hub account); whether the note is still in
     * the pool (its nullifier, which the withdrawal published); the exit account, only when the note may have left
     * (mayHoldExit). One request, or one burst, asking for the depositor and for what names its withdrawal would pair
     * them for the RPC node's operator (issue 33).
     */
    async locateFunds(plan: RoutePlaces): Promise<HeldFunds[]> {
      const note = await poolNoteOfRoute(deps.db, plan.routeId);
      const unspentNote = async () => {
        if (!note || note.withdrawnAt) return 0n;
        const ref = {
          asset: note.asset as Address,
          label: note.label,
          commitment: note.commitment,
          value: BigInt(note.value),
          txHash: note.txHash as Hex,
          blockNumber: BigInt(note.blockNumber),
          timestamp: 0,
        };
        return deps.pool.unspent(ref, plan.accountIndex);
      };
      const pause = () => new Promise((resolve) => setTimeout(resolve, randomInt(READ_PAUSE_MS.min, READ_PAUSE_MS.max + 1)));
      const [deposit, hub] = await Promise.all([
        tokenBalance(deps.chains, plan.sourceChainId, plan.sourceToken, plan.depositAddress),
        tokenBalance(deps.chains, plan.hubChainId, plan.hubToken, plan.hubAccount),
      ]);
      let pooled = 0n;
      if (note && !note.withdrawnAt) {
        await pause();
        pooled = await unspentNote();
      }
      let exit = 0n;
      if (mayHoldExit(note, pooled)) {
        await pause();
        exit = await tokenBalance(deps.chains, plan.hubChainId, plan.hubToken, exitAddressOf(deps, plan.accountIndex));
      }
      const held: HeldFunds[] = [
        { place: 'deposit', chainId: plan.sourceChainId, token: plan.sourceToken, address: plan.depositAddress, amount: deposit.toString() },
        { place: 'hub', chainId: plan.hubChainId, token: plan.hubToken, address: plan.hubAccount, amount: hub.toString() },
        { place: 'pool', chainId: plan.hubChainId, token: plan.hubToken, address: plan.hubAccount, amount: pooled.toString() },
        { place: 'exit', chainId: plan.hubChainId, token: plan.hubToken, address: exitAddressOf(deps, plan.accountIndex), amount: exit.toString() },
      ];
      return held.filter((h) => h.amount !== '0');
    },

    /**
     * Sends everything the route's deposit account holds of its source token (or of `token`: another ERC-20
     * sent there by mistake) to `to`. Keyed by (route, `refund:<key>`): a retry settles the same transaction,
     * never a second refund. Before a new refund is signed, the route's earlier refunds (other keys: runs that gave
     * up or crashed) are settled; one that mined unbooked is booked and returned instead (`earlier`).
     */
    /**
     * An operator's refund, checked before it waits (routectl refund tells the operator at once what would be refused)
     * and given its delay: REFUND_DELAY_MIN..MAX_SECONDS, or none when the audit row says --now. Moves nothing.
     */
    async prepareOperatorRefund(input: RefundInput): Promise<{ delaySeconds: number }> {
      const route = await transferOf(deps.db, input.routeId);
      if (!route) throw await refuseAction(deps.db, input.actionId, `unknown route ${input.routeId}`, 'UnknownRoute');
      if (input.actionId === undefined) throw await refuseAction(deps.db, undefined, 'refused: only an operator refund (with its audit row) is prepared');
      // Checked as it will be when sent, but for the wait itself.
      await checkRefund(deps, route, input, true);
      const [action] = await deps.db.select().from(operatorActions).where(eq(operatorActions.id, input.actionId));
      return { delaySeconds: operatorRefundDelay(deps, action?.params.now === true) };
    },

    async refundDeposit(input: RefundInput): Promise<RefundResult> {
      const route = await transferOf(deps.db, input.routeId);
      if (!route) throw await refuseAction(deps.db, input.actionId, `unknown route ${input.routeId}`, 'UnknownRoute');
      const step = `refund:${input.key}`;
      const signed = await deps.sender.intent(input.routeId, step);
      // A refund this run signed passed the checks before it was signed; a retry settles it, even once its row is done.
      if (!signed) await checkRefund(deps, route, input);
      try {
        const result = await refund(route, input, step, signed);
        if (input.actionId)
          await finishAction(
            deps.db,
            input.actionId,
            'done',
            `refunded ${result.amount} to ${result.to ?? input.to} (tx ${result.txHash})${result.earlier ? ` by the earlier run refund:${result.earlier}` : ''}`,
          );
        return result;
      } catch (error) {
        // Final refusals end the audit row here; a retryable error leaves it to the next attempt (or to flagRoute).
        if (input.actionId && error instanceof ApplicationFailure && error.nonRetryable) await finishAction(deps.db, input.actionId, 'refused', error.message);
        throw error;
      }
    },
  };

  async function refund(route: Transfer, input: RefundInput, step: string, signed: unknown): Promise<RefundResult> {
    const { deposit } = deps.keyring.routeAccounts(route.accountIndex);
    if (!signed) {
      await refuseWhileSendsPending(deps, route.routeId, route.sourceChainId, deposit.address, 'refund again');
      const earlier = await settleEarlierRefunds(deps, route, deposit, step);
      if (earlier) return earlier;
    }
    // The token given (a stray of another ERC-20), else the source token, else another token held there.
    const token = input.token ?? (signed ? (route.sourceToken as Address) : await depositTokenToRefund(deps, route));
    if (!signed) {
      // Of the native currency, the user's part only: the rest of the service's gas top-ups is not refunded.
      const balance = isNativeToken(token)
        ? await nativeUserBalance(deps, route)
        : await tokenBalance(deps.chains, route.sourceChainId, token, deposit.address);
      if (balance === 0n) throw failure('NothingToRefund', `deposit address ${deposit.address} holds nothing to refund`);
      refuseDust(deps, route, token, balance);
      // The native currency is refunded as value: the user's part, its gas topped up beside it like an ERC-20's.
      await ensureGas(deps, input.routeId, step, route.sourceChainId, deposit.address, deps.gasAccount, isNativeToken(token) ? balance : 0n);
      const current = isNativeToken(token) ? balance : await tokenBalance(deps.chains, route.sourceChainId, token, deposit.address);
      await deps.sender.send({ routeId: input.routeId, step, chainId: route.sourceChainId, account: deposit, ...paymentCall(token, input.to, current) });
    }
    const { txHash, receipt } = await deps.sender.send({ routeId: input.routeId, step, chainId: route.sourceChainId, account: deposit, to: token });
    return bookRefund(deps, route, input.key, txHash, receipt);
  }
}

export interface RefundInput {
  routeId: string;
  to: Address;
  key: string;
  token?: Address;
  /** The operator's audit row (routectl refund); absent for the service's own refunds, which go only to the refundAddress. */
  actionId?: number;
}

/**
 * Who may refund what, checked by the activity so that a refund workflow started straight in Temporal is held to it.
 * An operator's refund (with its audit row): a finished route, to an allowed destination. The service's own refunds
 * (stray deposits, an underpayment at the deadline): only to the route's refundAddress, as the projection has it.
 */
async function checkRefund(deps: ActivityDeps, route: Transfer, input: RefundInput, beforeItsWait = false): Promise<void> {
  const finished = isTerminalStatus(route.status);
  if (input.actionId === undefined) {
    const toRefundAddress = route.refundAddress !== null && route.refundAddress.toLowerCase() === input.to.toLowerCase();
    // A route funded from its own recipient is refunded before the pool, whatever its deadline, to its refundAddress or
    // back to where its deposit came from (activities/deposit.ts checkFunding).
    const reused =
      input.key === 'address-reuse' && route.status === 'AWAITING_DEPOSIT'
        ? reusedAddress(await fundingOfRoute(deps.db, route.routeId, BigInt(route.amount)), route.userDestinationAddress)
        : null;
    const backToItsSender = reused !== null && reused.toLowerCase() === input.to.toLowerCase();
    if (!toRefundAddress && !backToItsSender) {
      throw await refuseAction(
        deps.db,
        undefined,
        `refused: a refund without an operator action goes only to route ${route.routeId}'s refundAddress (${route.refundAddress ?? 'none'}), not ${input.to}; an operator refunds with routectl refund ${route.routeId} --to <address> --reason "…"`,
      );
    }
    // The route's own workflow refunds an underpayment at its deposit deadline, before it ends FAILED.
    const underpaidAtDeadline = input.key === 'underpaid' && route.status === 'AWAITING_DEPOSIT' && Date.now() >= route.depositDeadline.getTime() - 60_000;
    // A stray reaching a route in flight whose own deposit has left the address (activities/strays.ts).
    const pastDeposit = PAST_DEPOSIT.includes(route.status);
    if (!finished && !underpaidAtDeadline && reused === null && !pastDeposit)
      throw await refuseAction(
        deps.db,
        undefined,
        `refused: route ${route.routeId} is ${route.status}; only a finished route, or one whose deposit left its address, is refunded`,
      );
    return;
  }
  const action = await requireRequestedAction(deps.db, { actionId: input.actionId, action: 'refund', routeId: route.routeId, params: { to: input.to } });
  if (!finished) {
    throw await refuseAction(
      deps.db,
      input.actionId,
      `refused: route ${route.routeId} is ${route.status}; only a finished route (COMPLETED or FAILED) is refunded. End it first: routectl fail ${route.routeId} --reason "…"`,
    );
  }
  const override = typeof action.params.override === 'string' ? action.params.override : undefined;
  const notAllowed = destinationRefusal(route, input.to, deps.operatorAllowedDestinations, override);
  if (notAllowed) throw await refuseAction(deps.db, input.actionId, notAllowed);
  // A refund right after the route ended times its funds' way back next to its end (docs/privacy.md, "Strays and
  // refunds"): an operator's refund waits as the automatic ones do, unless it was asked for --now (recorded).
  const earliest = action.createdAt.getTime() + (deps.refundDelay?.minSeconds ?? 0) * 1000;
  if (!beforeItsWait && action.params.now !== true && Date.now() < earliest) {
    throw await refuseAction(
      deps.db,
      input.actionId,
      `refused: an operator's refund waits at least REFUND_DELAY_MIN_SECONDS (${deps.refundDelay?.minSeconds} s) after it was asked for (until ${new Date(earliest).toISOString()}); routectl refund schedules it so, or pass --now (recorded in the audit log)`,
    );
  }
}

/** The delay an operator's refund waits before it is sent: none when asked for --now, else drawn as for strays. */
function operatorRefundDelay(deps: ActivityDeps, now: boolean): number {
  if (now || !deps.refundDelay) return 0;
  return randomInt(deps.refundDelay.minSeconds, deps.refundDelay.maxSeconds + 1);
}

/** A refund as booked: `earlier` when it was signed by an earlier refund run (key) of the route, to its `to`. */
export interface RefundResult {
  amount: string;
  txHash: Hex;
  to: Address;
  earlier?: string;
}

/** Books a mined refund under `refunded:<key>`: the token and recipient its transaction moved (a retry may not know which a refund without a token chose). */
async function bookRefund(deps: ActivityDeps, route: Transfer, key: string, txHash: Hex, receipt: TransactionReceipt): Promise<RefundResult> {
  const [logged] = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs });
  const refund = logged
    ? { token: getAddress(logged.address), to: getAddress(logged.args.to), value: logged.args.value }
    : await nativeRefundOf(deps, route.sourceChainId, txHash);
  if (!refund) throw new Error(`refund transaction ${txHash} moved no tokens`);
  const amount = refund.value.toString();
  await recordLedger(deps.db, {
    routeId: route.routeId,
    kind: 'refunded',
    key,
    chainId: route.sourceChainId,
    token: refund.token,
    amount,
    txHash,
  });
  return { amount, txHash, to: refund.to };
}

/** A refund of the native currency: the value its transaction sent (none: it moved nothing). */
async function nativeRefundOf(deps: ActivityDeps, chainId: number, hash: Hex): Promise<{ token: Address; to: Address; value: bigint } | null> {
  const tx = await deps.chains.publicClient(chainId).getTransaction({ hash });
  return tx.to && tx.value > 0n ? { token: NATIVE_TOKEN, to: getAddress(tx.to), value: tx.value } : null;
}

/**
 * The route's refunds signed under other keys (each refund run has its own) and never booked: a run that gave up
 * while its refund was still pending, or crashed before booking it. Each is settled (never signed again): one that
 * mined is booked and returned, so no second refund is signed after it; one that reverted or was voided moved
 * nothing. One still pending stops this run (TransactionPendingError, retried, then the route is flagged).
 */
async function settleEarlierRefunds(deps: ActivityDeps, route: Transfer, deposit: LocalAccount, current: string): Promise<RefundResult | null> {
  const steps = await deps.db
    .selectDistinct({ step: txIntents.step })
    .from(txIntents)
    .where(and(eq(txIntents.routeId, route.routeId), like(txIntents.step, 'refund:%'), notLike(txIntents.step, '%:gas:%')));
  const booked = new Set((await ledgerOfRoute(deps.db, route.routeId)).filter((e) => e.kind === 'refunded').map((e) => e.entryKey));
  for (const { step } of steps) {
    const key = step.slice('refund:'.length);
    if (step === current || booked.has(entryKeyOf('refunded', key))) continue;
    if (!(await deps.sender.intent(route.routeId, step))) continue; // voided, never mined
    try {
      const { txHash, receipt } = await deps.sender.send({
        routeId: route.routeId,
        step,
        chainId: route.sourceChainId,
        account: deposit,
        to: route.sourceToken as Address,
      });
      return { ...(await bookRefund(deps, route, key, txHash, receipt)), earlier: key };
    } catch (error) {
      if (error instanceof TransactionRevertedError || error instanceof IntentVoidedError) continue;
      throw error;
    }
  }
  return null;
}

/** What locateFunds reads of a route: a plan, or a route as the projection holds it. */
export type RoutePlaces = Pick<
  RoutePlan,
  'routeId' | 'accountIndex' | 'sourceChainId' | 'sourceToken' | 'depositAddress' | 'hubChainId' | 'hubToken' | 'hubAccount'
>;

/**
 * Before an ended route's account moves what it holds (a refund from the deposit account, a recovery from the hub
 * or exit account): the route's sends that never reached a node are voided (a failed route's stale bridge-in would
 * otherwise be pushed out first, and the refund revert), and a send a node already has, which may still move the
 * funds, stops the move for an operator. `next`: what the operator does afterwards ("refund again").
 */
export async function refuseWhileSendsPending(deps: ActivityDeps, routeId: string, chainId: number, address: Address, next: string): Promise<void> {
  await deps.sender.voidUnsent(routeId, 'the route ended before this transaction reached a node');
  const pending = await deps.sender.queue(chainId, address);
  if (pending.length === 0) return;
  const listed = pending.map((row) => `intent #${row.id} (${row.step})`).join(', ');
  throw failure(
    'RouteSendPending',
    `${address} has unmined sends that may still move its funds: ${listed}. Wait for them, or cancel them with \`routectl void <id> --cancel\`, then ${next}`,
  );
}

/** Refunds below REFUND_MIN_AMOUNT of the route's source token are refused: the gas would cost more than they return. */
function refuseDust(deps: ActivityDeps, route: Transfer, token: Address, balance: bigint): void {
  if (!belowRefundMinimum(deps, route, token, balance)) return;
  const minimum = deps.refundMinimums?.[route.symbol];
  throw failure(
    'RefundBelowMinimum',
    `the deposit address holds ${formatAmount(balance, route.sourceDecimals)} ${route.symbol}, below REFUND_MIN_AMOUNT (${minimum} ${route.symbol}): not refunded, the gas would cost more than it returns`,
  );
}
