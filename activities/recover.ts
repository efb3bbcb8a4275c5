import { eq } from 'drizzle-orm';
import { encodeFunctionData, erc20Abi, isAddressEqual, parseEventLogs, type Address, type TransactionReceipt } from 'viem';
import { tokenBalance } from '../src/chain/erc20.ts';
import { type SentTransaction, TransactionRevertedError } from '../src/chain/txSender.ts';
import { operatorActions } from '../src/db/schema.ts';
import {
  destinationRefusal,
  finishAction,
  listActions,
  type RouteSide,
  recoverDestinationRefusal,
  recoverTooSoon,
  refuseAction,
  requireRequestedAction,
} from '../src/operators/audit.ts';
import type { HeldFunds } from '../src/domain/heldFunds.ts';
import type { Recovered } from '../src/domain/operatorResults.ts';
import type { ActivityDeps } from './deps.ts';
import { fundsActivities, refuseWhileSendsPending } from './funds.ts';
import { ensureGas } from './gas.ts';
import { poolActivities } from './pool.ts';
import { ledgerEntryOf, ledgerOfRoute, recordLedger } from '../src/transfers/ledgerStore.ts';
import { failure } from '../src/failures.ts';
import { flagForOperator, recordHeldFunds, transferOf } from '../src/transfers/transferStore.ts';

/** What each recovery step carries: the route, where its funds go, and the operator's audit row that asked for it. */
export interface RecoverStepInput {
  routeId: string;
  to: Address;
  actionId?: number;
  /** The side recovered (absent: a recovery requested before sides, any of the route's own addresses). */
  side?: RouteSide;
  /** The operator's reason for a destination the side's rule refuses (recorded in the audit row). */
  override?: string;
}

/**
 * `routectl recover`: moves what a FAILED route still holds on the hub chain to an address the operator names, one
 * side at a time: the deposit side (the pool note back to the hub account by ragequit, then the hub account's whole
 * hub-token balance) or the exit side (the exit account's). Every send is recorded before broadcast under (route, `recover:<place>:<n>`); recorded ones
 * are settled before a new one is considered, so a rerun moves only what arrived since, and never twice. As before
 * a refund, the route's sends that never reached a node are voided first, and one a node has stops the recovery.
 * A recorded send that reverted moved nothing: it is passed over (booked nothing) and the next index decides anew.
 */
export function recoverActivities(deps: ActivityDeps) {
  /**
   * The checks of every recovery step, made here so that a recover workflow started straight in Temporal is held to
   * them: the operator's audit row for this route and destination, a FAILED route, an allowed destination.
   */
  async function failedRoute(input: RecoverStepInput) {
    const route = await transferOf(deps.db, input.routeId);
    const params = { to: input.to, ...(input.side && { side: input.side }), ...(input.override && { override: input.override }) };
    await requireRequestedAction(deps.db, { actionId: input.actionId, action: 'recover', routeId: input.routeId, params });
    if (!route) throw await refuseAction(deps.db, input.actionId, `unknown route ${input.routeId}`, 'UnknownRoute');
    if (route.status !== 'FAILED') {
      throw await refuseAction(
        deps.db,
        input.actionId,
        `refused: route ${input.routeId} is ${route.status}; only a FAILED route's funds are recovered (fail it first: routectl fail ${input.routeId} --reason "…")`,
      );
    }
    const notAllowed = input.side
      ? recoverDestinationRefusal(route, input.side, input.to, deps.operatorAllowedDestinations, input.override)
      : destinationRefusal(route, input.to, deps.operatorAllowedDestinations, input.override);
    if (notAllowed) throw await refuseAction(deps.db, input.actionId, notAllowed);
    // The hour between a route's two sides holds for a workflow started by hand too, not only for routectl's.
    const tooSoon = input.side ? recoverTooSoon(await listActions(deps.db, { routeId: input.routeId }), input.routeId, input.side, input.override) : null;
    if (tooSoon) throw await refuseAction(deps.db, input.actionId, tooSoon);
    return route;
  }

  /** A step of one side run for the other: refused (the workflow runs a side's steps only; this guards a hand-made start). */
  async function requireSide(input: RecoverStepInput, side: RouteSide) {
    if (input.side && input.side !== side) {
      throw await refuseAction(deps.db, input.actionId, `refused: a recovery of the ${input.side} side does not move the route's ${side}-side funds`);
    }
  }

  /** What the transaction moved of `token` out of `from` (its Transfer events). */
  const movedOut = (receipt: TransactionReceipt, token: Address, from: Address) =>
    parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs })
      .filter((log) => isAddressEqual(log.address, token) && isAddressEqual(log.args.from, from))
      .reduce((sum, log) => sum + log.args.value, 0n);

  /** What the recovery of audit row `actionId` booked (ledger entries since the row was written), and what is left. */
  async function recoveryDetail(actionId: number, routeId: string, held: HeldFunds[]): Promise<string> {
    const [action] = await deps.db.select({ createdAt: operatorActions.createdAt }).from(operatorActions).where(eq(operatorActions.id, actionId));
    const since = action?.createdAt ?? new Date(0);
    const booked = (await ledgerOfRoute(deps.db, routeId)).filter((e) => (e.kind === 'recovered' || e.kind === 'ragequit') && e.createdAt >= since);
    const moved = booked.map((e) => `${e.entryKey} ${e.amount} (tx ${e.txHash ?? '?'})`).join(', ') || 'nothing moved';
    const left = held.map((h) => `${h.amount} at ${h.place}`).join(', ');
    return `${moved}${left ? `; still holds ${left}` : ''}`;
  }

  return {
    /** The route's unspent pool note back to its hub account (ragequit, as when it failed); null when there is none. */
    async recoverPoolNote(input: RecoverStepInput): Promise<Recovered | null> {
      await requireSide(input, 'deposit');
      const route = await failedRoute(input);
      const plan = { routeId: route.routeId, accountIndex: route.accountIndex, hubChainId: route.hubChainId, hubToken: route.hubToken as Address };
      const returned = await poolActivities(deps).ragequit(plan);
      if (!returned) return null;
      const booked = await ledgerEntryOf(deps.db, route.routeId, 'ragequit');
      return { place: 'pool', key: 'pool', amount: returned.amount, txHash: booked?.txHash ?? '' };
    },

    /** Sends everything the route's hub or exit account holds of the hub token to `to`. */
    async recoverAccount(input: RecoverStepInput & { place: 'hub' | 'exit' }): Promise<Recovered[]> {
      await requireSide(input, input.place === 'hub' ? 'deposit' : 'exit');
      const route = await failedRoute(input);
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
          throw failure(
            'RecoverReverted',
            `the recovery send from the ${input.place} account reverted (${step}); nothing moved. Find out why, then run routectl recover again`,
          );
        }
        const { txHash, receipt } = sent;
        const amount = movedOut(receipt, token, from.address).toString();
        const key = `${input.place}:${n}`;
        await recordLedger(deps.db, { routeId: route.routeId, kind: 'recovered', key, chainId: route.hubChainId, token, amount, txHash });
        recovered.push({ place: input.place, key, amount, txHash });
      }
    },

    /**
     * Records where the route's funds are now; the route needs attention only while it still holds some. The last
     * step of a recovery: its audit row (`actionId`) is done, with what the recovery booked.
     */
    async refreshHeldFunds(input: { routeId: string; actionId?: number }): Promise<HeldFunds[]> {
      const route = await transferOf(deps.db, input.routeId);
      if (!route) throw failure('UnknownRoute', `unknown route ${input.routeId}`);
      const held = await fundsActivities(deps).locateFunds({
        routeId: route.routeId,
        accountIndex: route.accountIndex,
        sourceChainId: route.sourceChainId,
        sourceToken: route.sourceToken as Address,
        depositAddress: route.depositAddress as Address,
        hubChainId: route.hubChainId,
        hubToken: route.hubToken as Address,
        hubAccount: route.hubAccount as Address,
      });
      await recordHeldFunds(deps.db, route.routeId, held);
      if (input.actionId) await finishAction(deps.db, input.actionId, 'done', await recoveryDetail(input.actionId, route.routeId, held));
      return held;
    },

    /**
     * A finished route needs an operator (a refund or recovery that gave up): listed by `routectl list --stuck`.
     * The operator's audit row of the refund or recovery, when there is one, ends `failed` with the same note.
     */
    async flagRoute(input: { routeId: string; error: string; actionId?: number }): Promise<void> {
      await flagForOperator(deps.db, input.routeId, input.error);
      if (input.actionId) await finishAction(deps.db, input.actionId, 'failed', input.error);
    },
  };
}
