import { and, eq } from 'drizzle-orm';
import { getAddress } from 'viem';
import type { Db } from '../db/client.ts';
import { depositTransfers, transfers } from '../db/schema.ts';
import { type DepositTransfer, type Funding, fundingOf } from '../domain/funding.ts';

/**
 * The transfers into a route's deposit address while it awaited its deposit (table `deposit_transfers`), and who
 * funded the route as they show it (src/domain/funding.ts).
 */

/** Records transfers into a route's deposit address; one recorded already is kept (rows are never rewritten). */
export async function recordDepositTransfers(db: Db, routeId: string, seen: readonly DepositTransfer[]): Promise<void> {
  if (seen.length === 0) return;
  await db
    .insert(depositTransfers)
    .values(
      seen.map((t) => ({
        routeId,
        txHash: t.txHash,
        logIndex: t.logIndex,
        blockNumber: t.blockNumber,
        sender: getAddress(t.from),
        value: t.value.toString(),
      })),
    )
    .onConflictDoNothing();
}

/** Who funded the route (of `amount`), from its recorded transfers. */
export async function fundingOfRoute(db: Db, routeId: string, amount: bigint): Promise<Funding> {
  const rows = await db.select().from(depositTransfers).where(eq(depositTransfers.routeId, routeId));
  return fundingOf(
    rows.map((r) => ({ from: r.sender, value: BigInt(r.value), blockNumber: r.blockNumber, logIndex: r.logIndex, txHash: r.txHash })),
    amount,
  );
}

/** Writes the funding's client and deposit transaction to the route while it still awaits its deposit. */
export async function recordFunding(db: Db, routeId: string, funding: Funding): Promise<void> {
  if (!funding.client || !funding.txHash) return;
  await db
    .update(transfers)
    .set({ depositTxHash: funding.txHash, depositSender: getAddress(funding.client) })
    .where(and(eq(transfers.routeId, routeId), eq(transfers.status, 'AWAITING_DEPOSIT')));
}
