import { and, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Address } from 'viem';
import type { Database } from '../src/db/client.ts';
import { poolNotes, transfers } from '../src/db/schema.ts';
import { amountClassKey } from '../src/privacy/amountClass.ts';
import {
  anonymitySetMembers,
  anonymitySetSize,
  type EarlierWithdrawal,
  type PoolNoteFacts,
  type PoolStateView,
  type SetMember,
} from '../src/privacy/anonymitySet.ts';
import type { NoteReview, PrivacyPool } from '../src/providers/privacyPool.ts';

/**
 * The database side of the anonymity set (src/privacy/anonymitySet.ts holds the definition): the service's notes of a
 * class with their clients, the class's earlier withdrawals with what each was proved with, and the recount after a
 * peer ragequits.
 */

/** A note of the service as the set sees it, with the pool's asset and what its withdrawal recorded. */
export interface ClassNote extends PoolNoteFacts {
  asset: Address;
  withdrawnAt: Date | null;
  /** The candidates counted when its withdrawal was proved (null before, and for routes older than that record). */
  members: SetMember[] | null;
}

const noteColumns = {
  routeId: poolNotes.routeId,
  asset: poolNotes.asset,
  amountClass: poolNotes.amountClass,
  commitment: poolNotes.commitment,
  label: poolNotes.label,
  client: transfers.privacyClient,
  withdrawnAt: poolNotes.withdrawnAt,
  ragequitAt: poolNotes.ragequitAt,
  members: poolNotes.anonymityMembers,
};

function toClassNote(row: {
  routeId: string;
  asset: string;
  amountClass: string | null;
  commitment: string;
  label: string;
  client: string | null;
  withdrawnAt: Date | null;
  ragequitAt: Date | null;
  members: SetMember[] | null;
}): ClassNote {
  return {
    routeId: row.routeId,
    asset: row.asset as Address,
    amountClass: row.amountClass,
    commitment: row.commitment,
    label: row.label,
    client: row.client,
    ragequit: row.ragequitAt !== null,
    withdrawnAt: row.withdrawnAt,
    members: row.members,
  };
}

/** The amount class of a route's note, from its transfer; null for a transfer quoted before amount classes. */
export async function amountClassOfRoute(db: Database, routeId: string): Promise<string | null> {
  const [row] = await db
    .select({ destChainId: transfers.destChainId, destToken: transfers.destToken, output: transfers.quotedOutputAmount, rounding: transfers.roundingAmount })
    .from(transfers)
    .where(eq(transfers.routeId, routeId));
  if (!row || row.rounding === null) return null;
  return amountClassKey(row.destChainId, row.destToken, BigInt(row.output));
}

/** Every note of the service of these classes: in the pool, withdrawn or ragequit. */
export async function notesOfClasses(db: Database, classes: string[]): Promise<ClassNote[]> {
  if (classes.length === 0) return [];
  const rows = await db
    .select(noteColumns)
    .from(poolNotes)
    .innerJoin(transfers, eq(transfers.routeId, poolNotes.routeId))
    .where(inArray(poolNotes.amountClass, classes));
  return rows.map(toClassNote);
}

/** The notes of these routes, as the set sees them. */
export async function notesOfRoutes(db: Database, routeIds: string[]): Promise<ClassNote[]> {
  if (routeIds.length === 0) return [];
  const rows = await db
    .select(noteColumns)
    .from(poolNotes)
    .innerJoin(transfers, eq(transfers.routeId, poolNotes.routeId))
    .where(inArray(poolNotes.routeId, routeIds));
  return rows.map(toClassNote);
}

/** A route's own note as the set sees it; null before it is recorded. */
export async function noteOfRoute(db: Database, routeId: string): Promise<ClassNote | null> {
  const [row] = await db
    .select(noteColumns)
    .from(poolNotes)
    .innerJoin(transfers, eq(transfers.routeId, poolNotes.routeId))
    .where(eq(poolNotes.routeId, routeId));
  return row ? toClassNote(row) : null;
}

/** The class's withdrawals mined before `before` (all so far when null), in mined order, with what each was proved with. */
function earlierWithdrawals(notes: readonly ClassNote[], own: ClassNote, before: Date | null): EarlierWithdrawal[] {
  const precedes = (n: ClassNote) =>
    n.withdrawnAt !== null && (before === null || n.withdrawnAt < before || (n.withdrawnAt.getTime() === before.getTime() && n.routeId < own.routeId));
  return notes
    .filter((n) => n.routeId !== own.routeId && n.amountClass === own.amountClass && precedes(n))
    .sort((a, b) => a.withdrawnAt!.getTime() - b.withdrawnAt!.getTime() || (a.routeId < b.routeId ? -1 : 1))
    .map((n) => ({ routeId: n.routeId, candidates: [n.routeId, ...(n.members ?? []).map((m) => m.routeId)] }));
}

/** The set of `own` in `state` if it withdrew now: its candidates among the class's notes, and the size. */
export function setIfWithdrawnNow(own: ClassNote, notes: readonly ClassNote[], state: PoolStateView): { members: SetMember[]; size: number } {
  const members = anonymitySetMembers(own, notes, state);
  return { members, size: anonymitySetSize(own.routeId, members, earlierWithdrawals(notes, own, null)) };
}

/** What GET reports for a withdrawn route: its recorded candidates, without those ragequit since, against the withdrawals mined before it. */
export async function reportedSize(db: Database, routeId: string): Promise<number> {
  const own = await noteOfRoute(db, routeId);
  if (!own?.members || own.amountClass === null) return 1;
  const notes = await notesOfClasses(db, [own.amountClass]);
  const ragequit = new Set(notes.filter((n) => n.ragequit).map((n) => n.routeId));
  return anonymitySetSize(routeId, own.members, earlierWithdrawals(notes, own, own.withdrawnAt), ragequit);
}

/**
 * The gate's view (activities/privacyWatcher.ts, and a route's own check): each note's review, and the set it would
 * leave with now, counting the candidates the ASP's latest root approves (every recorded note is in the pool's state
 * tree; the withdrawal counts again against the exact roots it proves against).
 */
export async function setsNow(db: Database, pool: Pick<PrivacyPool, 'reviewMany'>, own: ClassNote[]) {
  const classes = [...new Set(own.flatMap((n) => (n.amountClass === null ? [] : [n.amountClass])))];
  const notes = await notesOfClasses(db, classes);
  // Withdrawn notes were approved when they left (the ASP's set only grows); the ASP is asked about the rest.
  const asked = [...new Map([...own, ...notes].filter((n) => !n.ragequit && n.withdrawnAt === null).map((n) => [n.routeId, n])).values()];
  const reviewed = asked.length > 0 ? await pool.reviewMany(asked) : [];
  const reviews = new Map<string, NoteReview>(asked.map((n, i) => [n.routeId, reviewed[i] ?? 'pending']));
  const approved = new Set(notes.filter((n) => n.withdrawnAt !== null || reviews.get(n.routeId) === 'approved').map((n) => n.label));
  const view: PoolStateView = { inState: () => true, approved: (label) => approved.has(label) };
  const sizes = new Map(own.map((n) => [n.routeId, setIfWithdrawnNow(n, notes, view).size]));
  return { reviews, sizes };
}

/**
 * A ragequit shows that its note was never the one another route spent: every withdrawn route that counted it has its
 * reported set counted again without it.
 */
export async function recountAfterRagequit(db: Database, ragequitRouteId: string): Promise<number> {
  const counted = await db
    .select({ routeId: poolNotes.routeId })
    .from(poolNotes)
    .where(and(isNotNull(poolNotes.withdrawnAt), sql`${poolNotes.anonymityMembers} @> ${JSON.stringify([{ routeId: ragequitRouteId }])}::jsonb`));
  for (const { routeId } of counted) {
    const size = await reportedSize(db, routeId);
    await db
      .update(transfers)
      .set({ anonymitySet: size, updatedAt: sql`now()` })
      .where(and(eq(transfers.routeId, routeId), isNotNull(transfers.anonymitySet)));
  }
  return counted.length;
}
