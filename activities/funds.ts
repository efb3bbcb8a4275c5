import { ApplicationFailure } from '@temporalio/activity';
import { eq } from 'drizzle-orm';
import { encodeFunctionData, erc20Abi, getAddress, parseEventLogs, type Address, type Hex } from 'viem';
import { tokenBalance } from '../src/chain/erc20.ts';
import { poolNotes, transfers } from '../src/db/schema.ts';
import { formatAmount, parseAmount } from '../src/money/amount.ts';
import type { HeldFunds, RoutePlan } from '../workflows/types.ts';
import type { ActivityDeps } from './deps.ts';
import { ensureGas } from './gas.ts';
import { recordLedger } from './projection.ts';
import { depositTokenToRefund } from './strays.ts';

export function fundsActivities(deps: ActivityDeps) {
  return {
    /** Where the route's money is now: its deposit, hub and exit accounts and its unspent pool note. Read-only. */
    async locateFunds(plan: RoutePlaces): Promise<HeldFunds[]> {
      const [note] = await deps.db.select().from(poolNotes).where(eq(poolNotes.routeId, plan.routeId));
      const unspentNote = async () => {
        if (!note || note.withdrawnAt) return 0n;
        const ref = { asset: note.asset as Address, label: note.label, commitment: note.commitment, value: BigInt(note.value), txHash: note.txHash as Hex, blockNumber: BigInt(note.blockNumber), timestamp: 0 };
        return deps.pool.unspent(ref, plan.accountIndex);
      };
      const [deposit, hub, exit, pooled] = await Promise.all([
        tokenBalance(deps.chains, plan.sourceChainId, plan.sourceToken, plan.depositAddress),
        tokenBalance(deps.chains, plan.hubChainId, plan.hubToken, plan.hubAccount),
        tokenBalance(deps.chains, plan.hubChainId, plan.hubToken, plan.exitAccount),
        unspentNote(),
      ]);
      const held: HeldFunds[] = [
        { place: 'deposit', chainId: plan.sourceChainId, token: plan.sourceToken, address: plan.depositAddress, amount: deposit.toString() },
        { place: 'hub', chainId: plan.hubChainId, token: plan.hubToken, address: plan.hubAccount, amount: hub.toString() },
        { place: 'pool', chainId: plan.hubChainId, token: plan.hubToken, address: plan.hubAccount, amount: pooled.toString() },
        { place: 'exit', chainId: plan.hubChainId, token: plan.hubToken, address: plan.exitAccount, amount: exit.toString() },
      ];
      return held.filter((h) => h.amount !== '0');
    },

    /**
     * Sends everything the route's deposit account holds of its source token (or of `token`: another ERC-20
     * sent there by mistake) to `to`. Keyed by
     * (route, `refund:<key>`): a retry settles the same transaction, never a second refund.
     */
    async refundDeposit(input: { routeId: string; to: Address; key: string; token?: Address }): Promise<{ amount: string; txHash: Hex }> {
      const [route] = await deps.db.select().from(transfers).where(eq(transfers.routeId, input.routeId));
      if (!route) throw ApplicationFailure.nonRetryable(`unknown route ${input.routeId}`, 'UnknownRoute');
      const { deposit } = deps.keyring.routeAccounts(route.accountIndex);
      const step = `refund:${input.key}`;
      const signed = await deps.sender.intent(input.routeId, step);
      // The token given (a stray of another ERC-20), else the source token, else another token held there.
      const token = input.token ?? (signed ? (route.sourceToken as Address) : await depositTokenToRefund(deps, route));
      if (!signed) {
        await refuseWhileSendsPending(deps, route, deposit.address);
        const balance = await tokenBalance(deps.chains, route.sourceChainId, token, deposit.address);
        if (balance === 0n) throw ApplicationFailure.nonRetryable(`deposit address ${deposit.address} holds nothing to refund`, 'NothingToRefund');
        refuseDust(deps, route, token, balance);
        await ensureGas(deps, input.routeId, step, route.sourceChainId, deposit.address);
        const current = await tokenBalance(deps.chains, route.sourceChainId, token, deposit.address);
        await deps.sender.send({
          routeId: input.routeId,
          step,
          chainId: route.sourceChainId,
          account: deposit,
          to: token,
          data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [input.to, current] }),
        });
      }
      const { txHash, receipt } = await deps.sender.send({ routeId: input.routeId, step, chainId: route.sourceChainId, account: deposit, to: token });
      const [refund] = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs });
      if (!refund) throw new Error(`refund transaction ${txHash} moved no tokens`);
      const amount = refund.args.value.toString();
      // The token the signed transaction moved (a retry may not know which one a refund without a token chose).
      await recordLedger(deps, { routeId: input.routeId, kind: 'refunded', key: input.key, chainId: route.sourceChainId, token: getAddress(refund.address), amount, txHash });
      return { amount, txHash };
    },
  };
}

/** What locateFunds reads of a route: a plan, or a route as the projection holds it. */
export type RoutePlaces = Pick<RoutePlan, 'routeId' | 'accountIndex' | 'sourceChainId' | 'sourceToken' | 'depositAddress' | 'hubChainId' | 'hubToken' | 'hubAccount' | 'exitAccount'>;

type Route = typeof transfers.$inferSelect;

/**
 * Before a refund is signed: the route's sends that never reached a node are voided (a failed route's stale
 * bridge-in would otherwise be pushed out first, and the refund revert), and a send a node already has, which
 * may still move the deposit, stops the refund for an operator.
 */
async function refuseWhileSendsPending(deps: ActivityDeps, route: Route, depositAddress: Address): Promise<void> {
  await deps.sender.voidUnsent(route.routeId, 'the route ended before this transaction reached a node; a refund follows');
  const pending = await deps.sender.queue(route.sourceChainId, depositAddress);
  if (pending.length === 0) return;
  const listed = pending.map((row) => `intent #${row.id} (${row.step})`).join(', ');
  throw ApplicationFailure.nonRetryable(
    `the deposit address has unmined sends that may still move its funds: ${listed}. Wait for them, or cancel them with \`routectl void <id> --cancel\`, then refund again`,
    'RouteSendPending',
  );
}

/** Whether `balance` of `token` is below REFUND_MIN_AMOUNT (set per source-token symbol; other tokens have none). */
export function belowRefundMinimum(deps: ActivityDeps, route: Pick<Route, 'sourceToken' | 'symbol' | 'sourceDecimals'>, token: Address, balance: bigint): boolean {
  const minimum = token.toLowerCase() === route.sourceToken.toLowerCase() ? deps.refundMinimums?.[route.symbol] : undefined;
  return minimum !== undefined && balance < parseAmount(minimum, route.sourceDecimals, `REFUND_MIN_AMOUNT.${route.symbol}`);
}

/** Refunds below REFUND_MIN_AMOUNT of the route's source token are refused: the gas would cost more than they return. */
function refuseDust(deps: ActivityDeps, route: Route, token: Address, balance: bigint): void {
  if (!belowRefundMinimum(deps, route, token, balance)) return;
  const minimum = deps.refundMinimums?.[route.symbol];
  throw ApplicationFailure.nonRetryable(
    `the deposit address holds ${formatAmount(balance, route.sourceDecimals)} ${route.symbol}, below REFUND_MIN_AMOUNT (${minimum} ${route.symbol}): not refunded, the gas would cost more than it returns`,
    'RefundBelowMinimum',
  );
}
