import { sql } from 'drizzle-orm';
import { recordLedger } from '../src/transfers/ledgerStore.ts';
import { TRANSFER_STATUS_CHANNEL, type StatusNotification } from '../src/transfers/statusFeed.ts';
import type { ParkedStep } from '../src/domain/heldFunds.ts';
import type { StatusProjection } from '../src/domain/projection.ts';

import type { ActivityDeps } from './deps.ts';
import { enqueueWebhook } from './webhooks.ts';
import { applyStatus, transferOf, updateTransfer } from '../src/transfers/transferStore.ts';

export function projectionActivities(deps: ActivityDeps) {
  return {
    /** Writes the workflow's status into the Postgres projection, idempotently and in order. */
    async projectStatus(input: StatusProjection): Promise<void> {
      await writeStatus(deps, input);
    },

    /** Marks a transfer as parked (waiting for an operator) or clears the mark. */
    async projectAttention(input: { routeId: string; parked: ParkedStep | null }): Promise<void> {
      const { parked } = input;
      await updateTransfer(deps.db, input.routeId, {
        needsAttention: parked !== null,
        parkedStep: parked?.step ?? null,
        lastError: parked?.error ?? null,
        parkedSince: parked ? new Date(parked.since) : null,
        updatedAt: sql`now()`,
      });
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
  if (await applyStatus(deps.db, input)) {
    // Announces the change to the API's event streams (src/transfers/statusFeed.ts), so a status that lasts a
    // moment is still streamed. Not a money path: a lost notification costs only that event (the feed polls too).
    const change: StatusNotification = { routeId: input.routeId, statusSeq: input.seq, status: input.status };
    await deps.db.execute(sql`select pg_notify(${TRANSFER_STATUS_CHANNEL}, ${JSON.stringify(change)})`);
  }
  // After the update, also when it was a no-op (a retried write): the enqueue is idempotent and heals a crash
  // between this write and the delivery's start.
  await enqueueWebhook(deps, input);
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
  await recordLedger(deps.db, { routeId: input.routeId, kind: 'service_fee', chainId: input.chainId, token: input.token, amount: fee.toString() });
  // The part of it owed to the partner whose key created the route, as quoted (destination units).
  const route = await transferOf(deps.db, input.routeId);
  if (route?.partnerFeeAmount && BigInt(route.partnerFeeAmount) > 0n) {
    await recordLedger(deps.db, {
      routeId: input.routeId,
      kind: 'partner_fee',
      chainId: route.destChainId,
      token: route.destToken,
      amount: route.partnerFeeAmount,
    });
  }
}
