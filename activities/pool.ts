import { ApplicationFailure } from '@temporalio/activity';
import { tokenBalance } from '../src/chain/erc20.ts';
import type { RoutePlan } from '../workflows/types.ts';
import type { ActivityDeps } from './deps.ts';
import { ensureGas } from './gas.ts';
import { recordLedger } from './projection.ts';

export function poolActivities(deps: ActivityDeps) {
  return {
    /** Shields exactly what the bridge-in delivered to the route's hub account (never more: no other route's funds). */
    async shield(input: { plan: RoutePlan; amount: string }): Promise<{ noteValue: string }> {
      const { plan } = input;
      const { hub } = deps.keyring.routeAccounts(plan.accountIndex);
      const amount = BigInt(input.amount);
      const intent = await deps.sender.intent(plan.routeId, 'shield');
      if (!intent) {
        const balance = await tokenBalance(deps.chains, plan.hubChainId, plan.hubToken, hub.address);
        if (balance < amount) {
          throw ApplicationFailure.retryable(`hub account holds ${balance}, expected ${amount} before shielding`, 'HubBalanceShort');
        }
      }
      await ensureGas(deps, plan.routeId, 'shield', plan.hubChainId, hub.address);
      const result = await deps.pool.shield({
        routeId: plan.routeId,
        owner: hub,
        token: plan.hubToken,
        amount,
        commitment: deps.keyring.shieldCommitment(plan.routeId),
      });
      await recordLedger(deps, { routeId: plan.routeId, kind: 'shielded', chainId: plan.hubChainId, token: plan.hubToken, amount: result.noteValue.toString(), txHash: result.txHash });
      return { noteValue: result.noteValue.toString() };
    },

    /** Unshields the route's note to its exit account, a fresh account that never shielded. */
    async unshield(plan: RoutePlan): Promise<{ amount: string }> {
      const result = await deps.pool.unshield({
        routeId: plan.routeId,
        commitment: deps.keyring.shieldCommitment(plan.routeId),
        to: plan.exitAccount,
      });
      await recordLedger(deps, { routeId: plan.routeId, kind: 'unshielded', chainId: plan.hubChainId, token: plan.hubToken, amount: result.amount.toString(), txHash: result.txHash });
      return { amount: result.amount.toString() };
    },
  };
}
