import { and, eq, lt, sql } from 'drizzle-orm';
import { ledgerEntries, transfers } from '../src/db/schema.ts';
import type { TransferStatus } from '../workflows/types.ts';
import type { ActivityDeps } from './deps.ts';

export interface StatusProjection {
  routeId: string;
  /** Strictly increasing per route; a write with an older sequence number is ignored. */
  seq: number;
  status: TransferStatus;
  error?: string;
  payoutTxHash?: string;
}

export interface LedgerEntry {
  routeId: string;
  kind: 'received' | 'bridged_in' | 'arrived_on_hub' | 'shielded' | 'unshielded' | 'bridged_out' | 'paid' | 'service_fee';
  chainId: number;
  token: string;
  amount: string;
  txHash?: string;
}

export function projectionActivities(deps: ActivityDeps) {
  return {
    /** Writes the workflow's status into the Postgres projection, idempotently and in order. */
    async projectStatus(input: StatusProjection): Promise<void> {
      const terminal = input.status === 'COMPLETED' || input.status === 'FAILED';
      await deps.db
        .update(transfers)
        .set({
          status: input.status,
          statusSeq: input.seq,
          updatedAt: sql`now()`,
          ...(input.error !== undefined && { error: input.error }),
          ...(input.payoutTxHash !== undefined && { payoutTxHash: input.payoutTxHash }),
          ...(terminal && { completedAt: sql`now()` }),
        })
        .where(and(eq(transfers.routeId, input.routeId), lt(transfers.statusSeq, input.seq)));
    },
  };
}

/** Records one money movement of a route; recording the same kind twice keeps the first. */
export async function recordLedger(deps: ActivityDeps, entry: LedgerEntry): Promise<void> {
  await deps.db.insert(ledgerEntries).values(entry).onConflictDoNothing();
}
