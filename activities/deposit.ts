import { heartbeat, sleep } from '@temporalio/activity';
import { getAddress } from 'viem';
import { isNativeToken, tokenBalance } from '../src/chain/erc20.ts';
import { reusedAddress } from '../src/domain/funding.ts';
import type { RoutePlan } from '../src/domain/plan.ts';
import type { ActivityDeps } from './deps.ts';
import { recordLedger } from '../src/transfers/ledgerStore.ts';
import { fundingOfRoute, recordDepositTransfers, recordFunding } from '../src/transfers/depositTransferStore.ts';
import { transferOf } from '../src/transfers/transferStore.ts';
import { depositTransferOf, firstBlockAtOrAfter, nativeDepositsIn, TRANSFER_EVENT } from './depositWatcher.ts';

/** Blocks read per eth_getLogs call when the route's own transfers are read from the chain. */
const LOG_BLOCK_RANGE = 2_000n;

/** Who funded a route, as the funding check tells its workflow. */
export interface FundingCheck {
  /** The recipient, when it sent tokens into the deposit address: the route is linked for anyone (ADDRESS_REUSE_REFUSED). */
  reusedAddress: string | null;
  /** How many distinct senders funded it (non-dust transfers up to the amount). */
  senders: number;
}

export interface DepositOutcome {
  funded: boolean;
  /** Token balance of the deposit address when the wait ended, source-token units. */
  balance: string;
}

export function depositActivities(deps: ActivityDeps) {
  /** Reads the route's own token transfers into its deposit address from the chain, from its creation to now. */
  async function readTransfersFromChain(plan: RoutePlan): Promise<void> {
    const route = await transferOf(deps.db, plan.routeId);
    if (!route) throw new Error(`unknown route ${plan.routeId}`);
    const client = deps.chains.publicClient(plan.sourceChainId);
    const head = await client.getBlockNumber();
    const from = await firstBlockAtOrAfter(client, BigInt(Math.floor(route.createdAt.getTime() / 1000) - 60), head);
    if (isNativeToken(plan.sourceToken)) {
      // No logs to ask for: the blocks' transactions that sent value to the address.
      const found = await nativeDepositsIn(client, new Set([getAddress(plan.depositAddress)]), from, head);
      await recordDepositTransfers(
        deps.db,
        plan.routeId,
        found.map((d) => d.transfer),
      );
      return;
    }
    for (let start = from; start <= head; start += LOG_BLOCK_RANGE) {
      const end = start + LOG_BLOCK_RANGE - 1n < head ? start + LOG_BLOCK_RANGE - 1n : head;
      const logs = await client.getLogs({
        address: plan.sourceToken,
        event: TRANSFER_EVENT,
        args: { to: plan.depositAddress },
        fromBlock: start,
        toBlock: end,
      });
      await recordDepositTransfers(deps.db, plan.routeId, logs.map(depositTransferOf));
      heartbeat({ readingTransfersTo: plan.depositAddress, block: Number(end) });
    }
  }

  return {
    /**
     * Who funded the route, once its deposit address holds the amount: from the transfers the deposit watcher recorded,
     * or, where those do not reach the amount yet (the watcher lags, or the deadline found the deposit first), from the
     * chain's own logs. Read-only but for the records it completes; safe to retry.
     */
    async checkFunding(plan: RoutePlan): Promise<FundingCheck> {
      const amount = BigInt(plan.amount);
      let funding = await fundingOfRoute(deps.db, plan.routeId, amount);
      if (!funding.complete) {
        await readTransfersFromChain(plan);
        funding = await fundingOfRoute(deps.db, plan.routeId, amount);
      }
      await recordFunding(deps.db, plan.routeId, funding);
      return { reusedAddress: reusedAddress(funding, plan.recipient), senders: funding.senders.length };
    },

    /**
     * The route's deposit as the chain holds it now: read once when the deposit deadline passes, so a deposit
     * that the watcher has not reported (it lags, or is down) still funds the route.
     */
    async depositBalance(plan: Pick<RoutePlan, 'sourceChainId' | 'sourceToken' | 'depositAddress'>): Promise<{ balance: string }> {
      const balance = await tokenBalance(deps.chains, plan.sourceChainId, plan.sourceToken, plan.depositAddress);
      return { balance: balance.toString() };
    },

    /**
     * Waits until the route's deposit address holds the expected amount, or its deadline passes.
     * Read-only and heartbeating, so it is safe to retry and resumes after a worker restart.
     * Only transfers started before the deposit watcher (transferWorkflow v1) still run it: it holds an
     * activity slot for the whole wait.
     */
    async awaitDeposit(plan: RoutePlan): Promise<DepositOutcome> {
      const expected = BigInt(plan.amount);
      const deadline = Date.parse(plan.depositDeadline);
      for (;;) {
        const balance = await tokenBalance(deps.chains, plan.sourceChainId, plan.sourceToken, plan.depositAddress);
        if (balance >= expected) {
          await recordLedger(deps.db, {
            routeId: plan.routeId,
            kind: 'received',
            chainId: plan.sourceChainId,
            token: plan.sourceToken,
            amount: balance.toString(),
          });
          return { funded: true, balance: balance.toString() };
        }
        if (Date.now() >= deadline) return { funded: false, balance: balance.toString() };
        heartbeat({ balance: balance.toString() });
        await sleep(Math.min(deps.pollIntervalMs, Math.max(0, deadline - Date.now())));
      }
    },
  };
}
