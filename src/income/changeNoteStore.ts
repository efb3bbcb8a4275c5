import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { changeNotes } from '../db/schema.ts';
import type { ChangeNoteFacts } from './sweepPlan.ts';

export type ChangeNoteRow = typeof changeNotes.$inferSelect;

/** Records the change a withdrawal left (a route's own: generation 1; a sweep's: the next); recording it again keeps the first. */
export async function recordChangeNote(
  db: Db,
  note: { routeId: string; generation: number; asset: string; label: string; value: bigint; leftAt: Date },
): Promise<void> {
  await db
    .insert(changeNotes)
    .values({ ...note, value: note.value.toString() })
    .onConflictDoNothing();
}

/** The change notes no sweep has spent yet, worth anything, oldest first. */
export async function unsweptChangeNotes(db: Db): Promise<ChangeNoteFacts[]> {
  const rows = await db.select().from(changeNotes).where(isNull(changeNotes.sweptAt)).orderBy(asc(changeNotes.leftAt));
  return rows
    .filter((row) => BigInt(row.value) > 0n)
    .map((row) => ({
      routeId: row.routeId,
      generation: row.generation,
      asset: row.asset,
      value: BigInt(row.value),
      leftAt: Math.floor(row.leftAt.getTime() / 1000),
    }));
}

export async function changeNoteOf(db: Db, routeId: string, generation: number): Promise<ChangeNoteRow | null> {
  const [row] = await db
    .select()
    .from(changeNotes)
    .where(and(eq(changeNotes.routeId, routeId), eq(changeNotes.generation, generation)));
  return row ?? null;
}

/** A sweep of the note mined: it is spent, and what it left is the next generation (one transaction, so neither is lost). */
export async function bookSweep(db: Db, spent: ChangeNoteRow, sweep: { amount: bigint; txHash: string; at: Date }): Promise<void> {
  await db.transaction(async (tx) => {
    await tx
      .update(changeNotes)
      .set({ sweptAmount: sweep.amount.toString(), sweptTxHash: sweep.txHash, sweptAt: sweep.at })
      .where(and(eq(changeNotes.routeId, spent.routeId), eq(changeNotes.generation, spent.generation), isNull(changeNotes.sweptAt)));
    await recordChangeNote(tx, {
      routeId: spent.routeId,
      generation: spent.generation + 1,
      asset: spent.asset,
      label: spent.label,
      value: BigInt(spent.value) - sweep.amount,
      leftAt: sweep.at,
    });
  });
}
