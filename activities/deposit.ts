import { heartbeat, sleep } from '@temporalio/activity';
import { tokenBalance } from '../src/chain/erc20.ts';
import type { RoutePlan } from '../src/domain/plan.ts';
import type { ActivityDeps } from './deps.ts';
import { recordLedger } from '../src/transfers/ledgerStore.ts';

export interface DepositOutcome {
  funded: boolean;
  /** Token balance of the deposit address when the wait ended, source-token units. */
  balance: string;
}

export function depositActivities(deps: ActivityDeps) {
  return {
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
