/**
 * A partner's own transfers (those its API key created: transfers.partner_id): the listing and its lookups, the
 * externalId a partner gives its transfers, and the reissue of a statusToken. Every query here is scoped to one
 * partner: another key's transfers are never read, so they are never found.
 */
import { and, desc, eq, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { transfers } from '../db/schema.ts';
import type { TransferStatus } from '../domain/status.ts';
import { encodeCursor, type ListingPosition } from './listingCursor.ts';
import type { Transfer } from './transferStore.ts';

export interface PartnerTransferFilter {
  status?: TransferStatus;
  externalId?: string;
  /** The deposit's transaction hash (0x + 64 hex, any case). */
  depositTxHash?: string;
  /** The route's deposit address (0x + 40 hex, any case). */
  depositAddress?: string;
}

export interface PartnerPage {
  /** Where the previous page ended; none: the newest transfers. */
  after?: ListingPosition;
  limit: number;
}

/** The unique index that keeps an externalId to one transfer per partner (migration 0031). */
export const EXTERNAL_ID_INDEX = 'transfers_partner_external_id_uq';

/** A create named an externalId the partner gave another transfer already. */
export class ExternalIdTakenError extends Error {
  override name = 'ExternalIdTakenError';
  constructor(
    readonly externalId: string,
    readonly routeId: string,
  ) {
    super(`externalId "${externalId}" names transfer ${routeId} of this API key already`);
  }
}

/** The conditions of a filter, on top of the partner's own transfers. */
export function filterConditions(partnerId: number, filter: PartnerTransferFilter): SQL[] {
  const conditions: SQL[] = [eq(transfers.partnerId, partnerId)];
  if (filter.status !== undefined) conditions.push(eq(transfers.status, filter.status));
  if (filter.externalId !== undefined) conditions.push(eq(transfers.externalId, filter.externalId));
  if (filter.depositAddress !== undefined) conditions.push(sql`lower(${transfers.depositAddress}) = ${filter.depositAddress.toLowerCase()}`);
  if (filter.depositTxHash !== undefined) {
    // The watcher writes hashes as viem reads them: lower-case hex. The funding's hash is on the row; any other
    // transfer into the deposit address (a second deposit, a stray) is in deposit_transfers.
    const hash = filter.depositTxHash.toLowerCase();
    conditions.push(
      sql`(${transfers.depositTxHash} = ${hash} or exists (select 1 from deposit_transfers d where d.tx_hash = ${hash} and d.route_id = ${transfers.routeId}))`,
    );
  }
  return conditions;
}

/** created_at with its microseconds, in the cursor's form (src/transfers/listingCursor.ts). */
const createdAtText = sql<string>`to_char(${transfers.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * One page of the partner's transfers matching `filter`, newest first, and the cursor of the next page (null after
 * the last). Keyset pagination over (created_at, route_id): a transfer created meanwhile never shifts a page.
 */
export async function partnerTransferPage(
  db: Db,
  partnerId: number,
  filter: PartnerTransferFilter,
  page: PartnerPage,
): Promise<{ rows: Transfer[]; nextCursor: string | null }> {
  const conditions = filterConditions(partnerId, filter);
  if (page.after) {
    conditions.push(sql`(${transfers.createdAt}, ${transfers.routeId}) < (${page.after.createdAt}::timestamptz, ${page.after.routeId})`);
  }
  const found = await db
    .select({ row: transfers, createdAtText })
    .from(transfers)
    .where(and(...conditions))
    .orderBy(desc(transfers.createdAt), desc(transfers.routeId))
    .limit(page.limit + 1);
  const rows = found.slice(0, page.limit);
  const last = rows.at(-1);
  const nextCursor = found.length > page.limit && last ? encodeCursor({ createdAt: last.createdAtText, routeId: last.row.routeId }) : null;
  return { rows: rows.map((r) => r.row), nextCursor };
}

/** The routeId of the partner's transfer with this externalId, or null. */
export async function routeWithExternalId(db: Db, partnerId: number, externalId: string): Promise<string | null> {
  const [row] = await db
    .select({ routeId: transfers.routeId })
    .from(transfers)
    .where(and(eq(transfers.partnerId, partnerId), eq(transfers.externalId, externalId)));
  return row?.routeId ?? null;
}

/** Whether an insert failed on the externalId's unique index (postgres.js's error, or drizzle's wrapping it). */
export function isExternalIdConflict(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const pg = cause as Error & { code?: string; constraint_name?: string };
    if (pg.code === '23505' && pg.constraint_name === EXTERNAL_ID_INDEX) return true;
  }
  return false;
}

/**
 * Replaces the statusToken hash of the partner's transfer `routeId`: the old token stops opening it at once.
 * Returns false when the partner has no such transfer (unknown, or another key's).
 */
export async function replaceStatusTokenHash(db: Db, partnerId: number, routeId: string, statusTokenHash: string): Promise<boolean> {
  const changed = await db
    .update(transfers)
    // The first token's hash stays the public view's delay seed: a reissue must not move what the public view showed.
    .set({ statusTokenHash, publicDelaySeed: sql`coalesce(${transfers.publicDelaySeed}, ${transfers.statusTokenHash})` })
    .where(and(eq(transfers.routeId, routeId), eq(transfers.partnerId, partnerId)))
    .returning({ routeId: transfers.routeId });
  return changed.length > 0;
}
