import { eq, sql } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import type { Db } from '../db/client.ts';
import { poolNotes } from '../db/schema.ts';

/**
 * The notes routes hold in the privacy pool (table `pool_notes`, at most one per route): how a route's note is
 * read, recorded and marked as the route moves on. The anonymity-set reads over many notes live with their
 * rules (activities/anonymitySets.ts).
 */

/** One row of `pool_notes`. */
export type PoolNoteRow = typeof poolNotes.$inferSelect;

export async function poolNoteOfRoute(db: Db, routeId: string): Promise<PoolNoteRow | null> {
  const [row] = await db.select().from(poolNotes).where(eq(poolNotes.routeId, routeId));
  return row ?? null;
}

/** Records a route's note; a note recorded already is kept. */
export async function recordPoolNote(db: Db, row: typeof poolNotes.$inferInsert): Promise<void> {
  await db.insert(poolNotes).values(row).onConflictDoNothing();
}

/** Sets columns of the route's note. */
export async function updatePoolNote(db: Db, routeId: string, changes: PgUpdateSetSource<typeof poolNotes>): Promise<void> {
  await db.update(poolNotes).set(changes).where(eq(poolNotes.routeId, routeId));
}

/** The note was withdrawn at `at` (block time); withdrawing it shows it was approved, if that was not recorded yet. */
export function markWithdrawn(db: Db, routeId: string, at: Date): Promise<void> {
  return updatePoolNote(db, routeId, { withdrawnAt: at, approvedAt: sql`coalesce(${poolNotes.approvedAt}, now())` });
}
