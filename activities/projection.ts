import { and, eq, lt, sql } from 'drizzle-orm';
import { ledgerEntries, transferStatuses, transfers } from '../src/db/schema.ts';
import { TRANSFER_STATUS_CHANNEL, type StatusNotification } from '../src/transfers/statusFeed.ts';
import type { ParkedStep } from '../src/domain/heldFunds.ts';
import type { StatusProjection } from '../src/domain/projection.ts';

import type { ActivityDeps } from './deps.ts';
import { enqueueWebhook } from './webhooks.ts';
import { isTerminalStatus } from '../src/domain/status.ts';

export interface LedgerEntry {
  routeId: string;
  kind:
    | 'received'
    | 'bridged_in'
    | 'arrived_on_hub'
    | 'shielded'
    | 'unshielded'
    | 'bridged_out'
    | 'paid'
    | 'service_fee'
    | 'partner_fee'
    | 'refunded'
    | 'ragequit'
    | 'recovered';
  /** Distinguishes repeatable movements (refunds); defaults to the kind. */
  key?: string;
  chainId: number;
  token: string;
  amount: string;
  txHash?: string;
}

export function projectionActivities(deps: ActivityDeps) {
  return {
    /** Writes the workflow's status into the Postgres projection, idempotently and in order. */
    async projectStatus(input: StatusProjection): Promise<void> {
      await writeStatus(deps, input);
    },

    /** Marks a transfer as parked (waiting for an operator) or clears the mark. */
    async projectAttention(input: { routeId: string; parked: ParkedStep | null }): Promise<void> {
      const { parked } = input;
      await deps.db
        .update(transfers)
        .set({
          needsAttention: parked !== null,
          parkedStep: parked?.step ?? null,
          lastError: parked?.error ?? null,
          parkedSince: parked ? new Date(parked.since) : null,
          updatedAt: sql`now()`,
        })
        .where(eq(transfers.routeId, input.routeId));
    },
  };
}

/**
 * Writes a status into the Postgres projection, idempotently and in order (an older `seq` never overwrites a
 * newer one). Steps call it themselves with the status their workflow moved to (the `projection` field of their
 * input), so a status change costs no activity of its own.
 */
export async function writeStatus(deps: Pick<ActivityDeps, 'db' | 'webhookStarter' | 'webhooks'>, input: StatusProjection | undefined): Promise<void> {
  if (!input) return;
  const terminal = isTerminalStatus(input.status);
  // First the history the public view reads (src/transfers/transferService.ts): a retried write keeps the first time.
  await deps.db.insert(transferStatuses).values({ routeId: input.routeId, statusSeq: input.seq, status: input.status }).onConflictDoNothing();
  const applied = await deps.db
    .update(transfers)
    .set({
      status: input.status,
      statusSeq: input.seq,
      updatedAt: sql`now()`,
      ...(input.error !== undefined && { error: input.error }),
      ...(input.payoutTxHash !== undefined && { payoutTxHash: input.payoutTxHash }),
      ...(input.heldFunds !== undefined && { heldFunds: input.heldFunds.length > 0 ? input.heldFunds : null }),
      // A finished route counts in no one's anonymity set any more (src/privacy/anonymitySet.ts): its client is forgotten.
      // A finished route's deposit address is checked for strays once more (activities/strays.ts): what a route in flight
      // could not refund automatically is listed for an operator then.
      ...(terminal && { completedAt: sql`now()`, privacyClient: null, depositCheckedAt: null }),
      // The unfunded cap's client hash is kept only while the transfer awaits its deposit (src/api/abuseLimits.ts).
      ...(input.status !== 'AWAITING_DEPOSIT' && { clientHash: null }),
    })
    .where(and(eq(transfers.routeId, input.routeId), lt(transfers.statusSeq, input.seq)))
    .returning({ routeId: transfers.routeId });
  if (applied.length > 0) {
    // Announces the change to the API's event streams (src/transfers/statusFeed.ts), so a status that lasts a
    // moment is still streamed. Not a money path: a lost notification costs only that event (the feed polls too).
    const change: StatusNotification = { routeId: input.routeId, statusSeq: input.seq, status: input.status };
    await deps.db.execute(sql`select pg_notify(${TRANSFER_STATUS_CHANNEL}, ${JSON.stringify(change)})`);
  }
  // After the update, also when it was a no-op (a retried write): the enqueue is idempotent and heals a crash
  // between this write and the delivery's start.
  await enqueueWebhook(deps, input);
}

/** Records one money movement of a route; recording the same movement twice keeps the first. */
export async function recordLedger(deps: ActivityDeps, { key, ...entry }: LedgerEntry): Promise<void> {
  await deps.db
    .insert(ledgerEntries)
    .values({ ...entry, entryKey: key ? `${entry.kind}:${key}` : entry.kind })
    .onConflictDoNothing();
}

/**
 * Books what the service kept on a route: the note's value less the bridge-out input (the pool's change note, the
 * relay fee and any rounding dust at the exit account), and the partner's fee in it where a partner's key created the route.
 */
export async function recordServiceFee(
  deps: ActivityDeps,
  input: { routeId: string; chainId: number; token: string; shielded: string; bridgedOut: string },
): Promise<void> {
  const fee = BigInt(input.shielded) - BigInt(input.bridgedOut);
  await recordLedger(deps, { routeId: input.routeId, kind: 'service_fee', chainId: input.chainId, token: input.token, amount: fee.toString() });
  // The part of it owed to the partner whose key created the route, as quoted (destination units).
  const [route] = await deps.db
    .select({ partnerFeeAmount: transfers.partnerFeeAmount, chainId: transfers.destChainId, token: transfers.destToken })
    .from(transfers)
    .where(eq(transfers.routeId, input.routeId));
  if (route?.partnerFeeAmount && BigInt(route.partnerFeeAmount) > 0n) {
    await recordLedger(deps, { routeId: input.routeId, kind: 'partner_fee', chainId: route.chainId, token: route.token, amount: route.partnerFeeAmount });
  }
}
