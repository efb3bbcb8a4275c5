import { and, eq, lt, type SQL, sql } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import type { Db } from '../db/client.ts';
import { transferStatuses, transfers } from '../db/schema.ts';
import type { HeldFunds } from '../domain/heldFunds.ts';
import type { StatusProjection } from '../domain/projection.ts';
import { isTerminalStatus } from '../domain/status.ts';
import { failureCodeOf } from '../domain/failureCodes.ts';

/**
 * The transfers table (one row per route): how a route's row is read and changed. Callers decide what to write;
 * this module only says how, in SQL, so the rules that come with a write (what a finished route forgets, when a
 * route needs an operator) live in one place.
 */

/** One row of `transfers`. */
export type Transfer = typeof transfers.$inferSelect;

/** Columns a write may set (`routeId` never changes). */
export type TransferChanges = Omit<PgUpdateSetSource<typeof transfers>, 'routeId'>;

/** How held funds are stored: none is null (the column's "holds nothing"). */
const storedHeldFunds = (held: HeldFunds[]) => (held.length > 0 ? held : null);

/** What `lastError` says while a route holds funds an operator must decide on. */
export const HOLDS_FUNDS_NOTE = 'the route holds funds; see heldFunds';

export async function transferOf(db: Db, routeId: string): Promise<Transfer | null> {
  const [row] = await db.select().from(transfers).where(eq(transfers.routeId, routeId));
  return row ?? null;
}

/** Sets columns of one route's row, where `onlyIf` (when given) holds too. Returns whether the row changed. */
export async function updateTransfer(db: Db, routeId: string, changes: TransferChanges, onlyIf?: SQL): Promise<boolean> {
  const changed = await db
    .update(transfers)
    .set(changes)
    .where(onlyIf ? and(eq(transfers.routeId, routeId), onlyIf) : eq(transfers.routeId, routeId))
    .returning({ routeId: transfers.routeId });
  return changed.length > 0;
}

/**
 * Records where the route's funds are (`held`, every place); the route needs an operator exactly while it holds
 * some. `note` replaces the default `lastError`.
 */
export function recordHeldFunds(db: Db, routeId: string, held: HeldFunds[], note: string | null = null, now = new Date()): Promise<boolean> {
  return updateTransfer(db, routeId, {
    heldFunds: storedHeldFunds(held),
    needsAttention: held.some((h) => isListedBy(h, now)),
    lastError: note ?? (held.length > 0 ? HOLDS_FUNDS_NOTE : null),
  });
}

/** Whether a holding asks for an operator by `now`: at once, or, for a stray listed in a batch, once its batch came. */
export const isListedBy = (held: HeldFunds, now: Date) => held.listedFrom === undefined || Date.parse(held.listedFrom) <= now.getTime();

/** A route an operator must look at (`routectl list --stuck`), with why. */
export function flagForOperator(db: Db, routeId: string, error: string): Promise<boolean> {
  return updateTransfer(db, routeId, { needsAttention: true, lastError: error });
}

/**
 * Writes a status: first its line in the history the public view reads (a retried write keeps the first time),
 * then the row, only if no newer status is there already. Returns whether the row took it.
 */
export async function applyStatus(db: Db, write: StatusProjection): Promise<boolean> {
  await db.insert(transferStatuses).values({ routeId: write.routeId, statusSeq: write.seq, status: write.status }).onConflictDoNothing();
  return updateTransfer(
    db,
    write.routeId,
    {
      status: write.status,
      statusSeq: write.seq,
      updatedAt: sql`now()`,
      ...(write.error !== undefined && { error: write.error }),
      ...(write.payoutTxHash !== undefined && { payoutTxHash: write.payoutTxHash }),
      ...(write.heldFunds !== undefined && { heldFunds: storedHeldFunds(write.heldFunds) }),
      ...(write.status === 'FAILED' && { failureCode: failureCodeOf(write.error, write.failedAt) }),
      // A finished route counts in no one's anonymity set any more (src/privacy/anonymitySet.ts): its client is forgotten.
      // A finished route's deposit address is checked for strays once more (activities/strays.ts): what a route in flight
      // could not refund automatically is listed for an operator then.
      ...(isTerminalStatus(write.status) && { completedAt: sql`now()`, privacyClient: null, privacyVoucher: null, depositCheckedAt: null }),
      // The unfunded cap's client hash is kept only while the transfer awaits its deposit (src/api/abuseLimits.ts).
      ...(write.status !== 'AWAITING_DEPOSIT' && { clientHash: null }),
    },
    lt(transfers.statusSeq, write.seq),
  );
}

/** The sequence of the status written when a transfer's workflow could not be started: after any the workflow could write. */
const NEVER_STARTED_SEQ = 1_000_000;

/**
 * Ends a transfer whose workflow could not be started: FAILED, never funded, so its client is forgotten and the
 * public view shows the failure at once (its history time is the epoch, before any delay could apply).
 */
export async function failNeverStarted(db: Db, routeId: string): Promise<void> {
  await updateTransfer(db, routeId, {
    status: 'FAILED',
    error: 'the transfer could not be started; do not deposit',
    failureCode: 'NOT_STARTED',
    statusSeq: NEVER_STARTED_SEQ,
    clientHash: null,
    privacyClient: null,
    privacyVoucher: null,
    updatedAt: sql`now()`,
  });
  await db
    .insert(transferStatuses)
    .values({ routeId, statusSeq: NEVER_STARTED_SEQ, status: 'FAILED', reachedAt: new Date(0) })
    .onConflictDoNothing();
}
