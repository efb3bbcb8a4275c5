import { asc, and, eq } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { ledgerEntries } from '../db/schema.ts';

/**
 * The per-route ledger (table `ledger_entries`): every money movement of a route, once each. A movement is
 * named by its entry key (the kind, or `kind:key` for repeatable ones such as refunds), so booking it again
 * keeps the first record.
 */

/** One row of `ledger_entries`. */
export type LedgerRow = typeof ledgerEntries.$inferSelect;

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
    | 'recovered'
    /** The service's income: part of a change note the route's withdrawal left, swept to the treasury (src/income/). */
    | 'income_swept';
  /** Distinguishes repeatable movements (refunds); defaults to the kind. */
  key?: string;
  chainId: number;
  token: string;
  amount: string;
  txHash?: string;
}

/** The entry key a movement is booked under. */
export const entryKeyOf = (kind: LedgerEntry['kind'], key?: string) => (key ? `${kind}:${key}` : kind);

/** Records one money movement of a route; recording the same movement twice keeps the first. */
export async function recordLedger(db: Db, { key, ...entry }: LedgerEntry): Promise<void> {
  await db
    .insert(ledgerEntries)
    .values({ ...entry, entryKey: entryKeyOf(entry.kind, key) })
    .onConflictDoNothing();
}

/** A route's ledger, in booking order. */
export function ledgerOfRoute(db: Db, routeId: string): Promise<LedgerRow[]> {
  return db.select().from(ledgerEntries).where(eq(ledgerEntries.routeId, routeId)).orderBy(asc(ledgerEntries.id));
}

/** The route's movement booked under `entryKey`, if any. */
export async function ledgerEntryOf(db: Db, routeId: string, entryKey: string): Promise<LedgerRow | null> {
  const [row] = await db
    .select()
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.routeId, routeId), eq(ledgerEntries.entryKey, entryKey)));
  return row ?? null;
}
