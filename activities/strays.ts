import { heartbeat } from '@temporalio/activity';
import { and, eq, gte, inArray } from 'drizzle-orm';
import type { Address } from 'viem';
import { tokenBalance } from '../src/chain/erc20.ts';
import { type HeldFunds, transfers } from '../src/db/schema.ts';
import type { ActivityDeps } from './deps.ts';

const SCAN_BATCH = 8;

export interface StrayDeposit {
  routeId: string;
  amount: string;
  refundAddress: Address | null;
}

/**
 * Surplus, second and late deposits: money that reaches a route's deposit address after the route took
 * (or stopped waiting for) its deposit. Only finished routes are scanned, so a running transfer's own
 * deposit is never mistaken for a stray one.
 */
export function strayActivities(deps: ActivityDeps) {
  return {
    /**
     * Finds finished routes whose deposit address holds funds. Routes with a refundAddress are returned for
     * refunding; the others are marked as holding funds that need an operator decision.
     */
    async scanStrayDeposits(input: { retentionDays: number }): Promise<StrayDeposit[]> {
      const since = new Date(Date.now() - input.retentionDays * 86_400_000);
      const finished = await deps.db
        .select()
        .from(transfers)
        .where(and(inArray(transfers.status, ['COMPLETED', 'FAILED']), gte(transfers.updatedAt, since)));
      const found: StrayDeposit[] = [];
      // A few balance reads at a time, heartbeating between batches, so thousands of routes stay within the budget.
      for (let i = 0; i < finished.length; i += SCAN_BATCH) {
        const batch = finished.slice(i, i + SCAN_BATCH);
        const balances = await Promise.all(batch.map((r) => tokenBalance(deps.chains, r.sourceChainId, r.sourceToken as Address, r.depositAddress as Address)));
        for (const [j, route] of batch.entries()) await inspect(route, balances[j]!);
        heartbeat({ scanned: i + batch.length, of: finished.length });
      }
      return found;

      async function inspect(route: (typeof finished)[number], balance: bigint) {
        const listed = route.heldFunds?.find((h) => h.place === 'deposit')?.amount ?? '0';
        if (balance === 0n) {
          if (listed !== '0') await setDepositHolding(deps, route.routeId, route.heldFunds ?? [], null, null);
          return;
        }
        if (route.refundAddress) {
          found.push({ routeId: route.routeId, amount: balance.toString(), refundAddress: route.refundAddress as Address });
        } else if (listed !== balance.toString()) {
          const holding: HeldFunds = { place: 'deposit', chainId: route.sourceChainId, token: route.sourceToken, address: route.depositAddress, amount: balance.toString() };
          const note = `${balance} ${route.symbol} (smallest units) is held at the deposit address: it arrived after the route took or stopped waiting for its deposit (overpayment, second or late deposit) and there is no refundAddress. Refund it with: routectl refund ${route.routeId} --to <address>`;
          await setDepositHolding(deps, route.routeId, route.heldFunds ?? [], holding, note);
        }
      }
    },

    /** After a refund: the deposit address no longer holds anything for an operator to decide on. */
    async clearDepositHolding(input: { routeId: string }): Promise<void> {
      const [route] = await deps.db.select().from(transfers).where(eq(transfers.routeId, input.routeId));
      if (route) await setDepositHolding(deps, route.routeId, route.heldFunds ?? [], null, null);
    },
  };
}

async function setDepositHolding(deps: ActivityDeps, routeId: string, held: HeldFunds[], deposit: HeldFunds | null, note: string | null): Promise<void> {
  const next = [...held.filter((h) => h.place !== 'deposit'), ...(deposit ? [deposit] : [])];
  await deps.db
    .update(transfers)
    .set({ heldFunds: next.length > 0 ? next : null, needsAttention: next.length > 0, lastError: note ?? (next.length > 0 ? 'the route holds funds; see heldFunds' : null) })
    .where(eq(transfers.routeId, routeId));
}
