import { ApplicationFailure } from '@temporalio/activity';
import { and, eq } from 'drizzle-orm';
import { encodeFunctionData, erc20Abi, isAddressEqual, parseEventLogs, type Address, type TransactionReceipt } from 'viem';
import { tokenBalance } from '../src/chain/erc20.ts';
import { type SentTransaction, TransactionRevertedError } from '../src/chain/txSender.ts';
import { ledgerEntries, transfers } from '../src/db/schema.ts';
import type { HeldFunds } from '../workflows/types.ts';
import type { ActivityDeps } from './deps.ts';
import { fundsActivities, refuseWhileSendsPending } from './funds.ts';
import { ensureGas } from './gas.ts';
import { poolActivities } from './pool.ts';
import { recordLedger } from './projection.ts';

/** One movement of a failed route's funds by `routectl recover` (as booked in the ledger). */
export interface Recovered {
  place: 'pool' | 'hub' | 'exit';
  /** `hub:0`, `hub:1`…: the ledger key of a recovery send; `pool`: the ragequit into the hub account. */
  key: string;
  amount: string;
  txHash: string;
}

/**
 * `routectl recover`: moves what a FAILED route still holds on the hub chain to an address the operator names.
 * The pool note goes back to the hub account (ragequit), then the hub and exit accounts each send their whole
 * hub-token balance. Every send is recorded before broadcast under (route, `recover:<place>:<n>`); recorded ones
 * are settled before a new one is considered, so a rerun moves only what arrived since, and never twice. As before
 * a refund, the route's sends that never reached a node are voided first, and one a node has stops the recovery.
 * A recorded send that reverted moved nothing: it is passed over (booked nothing) and the next index decides anew.
 */
export function recoverActivities(deps: ActivityDeps) {
  async function failedRoute(routeId: string) {
    const [route] = await deps.db.select().from(transfers).where(eq(transfers.routeId, routeId));
    if (!route) throw ApplicationFailure.nonRetryable(`unknown route ${routeId}`, 'UnknownRoute');
    if (route.status !== 'FAILED') throw ApplicationFailure.nonRetryable(`route ${routeId} is ${route.status}; only a FAILED route's funds are recovered`, 'RouteNotFailed');
    return route;
  }

  /** What the transaction moved of `token` out of `from` (its Transfer events). */
  const movedOut = (receipt: TransactionReceipt, token: Address, from: Address) =>
    parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs })
      .filter((log) => isAddressEqual(log.address, token) && isAddressEqual(log.args.from, from))
      .reduce((sum, log) => sum + log.args.value, 0n);

  return {
    /** The route's unspent pool note back to its hub account (ragequit, as when it failed); null when there is none. */
    async recoverPoolNote(input: { routeId: string }): Promise<Recovered | null> {
      const route = await failedRoute(input.routeId);
      const plan = { routeId: route.routeId, accountIndex: route.accountIndex, hubChainId: route.hubChainId, hubToken: route.hubToken as Address };
      const returned = await poolActivities(deps).ragequit(plan);
      if (!returned) return null;
      const [booked] = await deps.db
        .select()
        .from(ledgerEntries)
        .where(and(eq(ledgerEntries.routeId, route.routeId), eq(ledgerEntries.entryKey, 'ragequit')));
      return { place: 'pool', key: 'pool', amount: returned.amount, txHash: booked?.txHash ?? '' };
    },

    /** Sends everything the route's hub or exit account holds of the hub token to `to`. */
    async recoverAccount(input: { routeId: string; place: 'hub' | 'exit'; to: Address }): Promise<Recovered[]> {
      const route = await failedRoute(input.routeId);
      const accounts = deps.keyring.routeAccounts(route.accountIndex);
      const from = input.place === 'hub' ? accounts.hub : accounts.exit;
      // Gas as for the route's own sends: the gas account before the pool, the pool's relayer after it.
      const funder = input.place === 'hub' ? deps.gasAccount : deps.poolRelayer;
      const token = route.hubToken as Address;
      const base = { routeId: route.routeId, chainId: route.hubChainId, account: from, to: token };
      const recovered: Recovered[] = [];
      for (let n = 0; ; n++) {
        const step = `recover:${input.place}:${n}`;
        const signedHere = !(await deps.sender.intent(route.routeId, step));
        if (signedHere) {
          if ((await tokenBalance(deps.chains, route.hubChainId, token, from.address)) === 0n) return recovered;
          // A stale send of the failed route must not go out first (or mine first, once fee-bumped) and make this one revert.
          await refuseWhileSendsPending(deps, route.routeId, route.hubChainId, from.address, 'recover again');
          await ensureGas(deps, route.routeId, step, route.hubChainId, from.address, funder);
          const balance = await tokenBalance(deps.chains, route.hubChainId, token, from.address);
          await deps.sender.send({ ...base, step, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [input.to, balance] }) });
        }
        // A recorded send is settled, never signed again.
        let sent: SentTransaction;
        try {
          sent = await deps.sender.send({ ...base, step });
        } catch (error) {
          if (!(error instanceof TransactionRevertedError)) throw error;
          // Signed by an earlier run: it moved nothing, so the next index looks at the balance again. Signed just now:
          // the operator looks (a rerun passes over it), rather than this loop signing one revert after another.
          if (!signedHere) continue;
          throw ApplicationFailure.nonRetryable(`the recovery send from the ${input.place} account reverted (${step}); nothing moved. Find out why, then run routectl recover again`, 'RecoverReverted');
        }
        const { txHash, receipt } = sent;
        const amount = movedOut(receipt, token, from.address).toString();
        const key = `${input.place}:${n}`;
        await recordLedger(deps, { routeId: route.routeId, kind: 'recovered', key, chainId: route.hubChainId, token, amount, txHash });
        recovered.push({ place: input.place, key, amount, txHash });
      }
    },

    /** Records where the route's funds are now; the route needs attention only while it still holds some. */
    async refreshHeldFunds(input: { routeId: string }): Promise<HeldFunds[]> {
      const [route] = await deps.db.select().from(transfers).where(eq(transfers.routeId, input.routeId));
      if (!route) throw ApplicationFailure.nonRetryable(`unknown route ${input.routeId}`, 'UnknownRoute');
      const held = await fundsActivities(deps).locateFunds({
        routeId: route.routeId,
        accountIndex: route.accountIndex,
        sourceChainId: route.sourceChainId,
        sourceToken: route.sourceToken as Address,
        depositAddress: route.depositAddress as Address,
        hubChainId: route.hubChainId,
        hubToken: route.hubToken as Address,
        hubAccount: route.hubAccount as Address,
        exitAccount: route.exitAccount as Address,
      });
      await deps.db
        .update(transfers)
        .set({ heldFunds: held.length > 0 ? held : null, needsAttention: held.length > 0, lastError: held.length > 0 ? 'the route holds funds; see heldFunds' : null })
        .where(eq(transfers.routeId, route.routeId));
      return held;
    },

    /** A finished route needs an operator (a refund or recovery that gave up): listed by `routectl list --stuck`. */
    async flagRoute(input: { routeId: string; error: string }): Promise<void> {
      await deps.db.update(transfers).set({ needsAttention: true, lastError: input.error }).where(eq(transfers.routeId, input.routeId));
    },
  };
}
