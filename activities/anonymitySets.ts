import { createHash } from 'node:crypto';
import { and, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Address } from 'viem';
import type { Database } from '../src/db/client.ts';
import { poolNotes, transfers } from '../src/db/schema.ts';
import { amountClassKey } from '../src/privacy/amountClass.ts';
import {
  anonymitySetMembers,
  anonymitySetSize,
  clientIdentities,
  unsettledMembers,
  type ClassWithdrawals,
  type PoolNoteFacts,
  type PoolStateView,
  type SetMember,
} from '../src/privacy/anonymitySet.ts';
import { nextExitEpoch, type ExitRules, type ExitTiming } from '../src/privacy/exitEpochs.ts';
import type { PrivacyPool } from '../src/providers/privacyPool.ts';
import type { NoteReview } from '../src/domain/observations.ts';

/**
 * The database side of the anonymity set (src/privacy/anonymitySet.ts holds the definition): the service's notes of a
 * class with their clients' pseudonyms, the class's withdrawals with what each was proved with, and the recount of the
 * reports a new withdrawal or a ragequit changes.
 */

/** Reports of withdrawals older than this are not counted again (the class's later events barely move them). */
const RECOUNT_WINDOW_MS = 30 * 24 * 3600 * 1000;

/** A note of the service as the set sees it, with the pool's asset and what its withdrawal recorded. */
export interface ClassNote extends PoolNoteFacts {
  asset: Address;
  /** The deposit's sender as a pseudonym of the class (null when unknown). */
  sender: string | null;
  withdrawnAt: Date | null;
  /** The candidates counted when its withdrawal was proved (null before, and for routes older than that record)... */
  members: SetMember[] | null;
  /** ...and the state tree's leaf count it proved against. */
  provedLeaves: number | null;
}

const noteColumns = {
  routeId: poolNotes.routeId,
  asset: poolNotes.asset,
  amountClass: poolNotes.amountClass,
  commitment: poolNotes.commitment,
  label: poolNotes.label,
  value: poolNotes.value,
  client: poolNotes.clientTag,
  sender: poolNotes.senderTag,
  withdrawnAt: poolNotes.withdrawnAt,
  ragequitAt: poolNotes.ragequitAt,
  depositedAt: poolNotes.depositedAt,
  approvedAt: poolNotes.approvedAt,
  members: poolNotes.anonymityMembers,
  provedLeaves: poolNotes.provedLeaves,
};

interface NoteRow {
  routeId: string;
  asset: string;
  amountClass: string | null;
  commitment: string;
  label: string;
  value: string;
  client: string | null;
  sender: string | null;
  withdrawnAt: Date | null;
  ragequitAt: Date | null;
  depositedAt: Date;
  approvedAt: Date | null;
  members: SetMember[] | null;
  provedLeaves: number | null;
}

function toClassNote(row: NoteRow): ClassNote {
  return {
    sender: row.sender,
    routeId: row.routeId,
    asset: row.asset as Address,
    amountClass: row.amountClass,
    commitment: row.commitment,
    label: row.label,
    value: BigInt(row.value),
    client: row.client,
    ragequit: row.ragequitAt !== null,
    depositedAt: row.depositedAt.getTime(),
    approvedAt: row.approvedAt?.getTime() ?? null,
    withdrawnAt: row.withdrawnAt,
    members: row.members,
    provedLeaves: row.provedLeaves,
  };
}

const selectNotes = (db: Database) => db.select(noteColumns).from(poolNotes);

/** The notes with `client` set to their identity (src/privacy/anonymitySet.ts clientIdentities): one creator or one sender is one client. */
function asIdentities(notes: ClassNote[]): ClassNote[] {
  const identities = clientIdentities(notes);
  return notes.map((note) => ({ ...note, client: identities.get(note.routeId) ?? null }));
}

/** `own` as it stands among `notes` (its identity merged with theirs). */
const amongNotes = (own: ClassNote, notes: readonly ClassNote[]) => notes.find((n) => n.routeId === own.routeId) ?? own;

/**
 * The class of a route's note, from its transfer (null for a transfer quoted before amount classes), and its client's
 * pseudonym in that class: SHA-256 of the client's keyed hash and the class, so it tells one client's notes of a class
 * apart from another's and names no one (the hash's key is CLIENT_HASH_KEY).
 */
export async function classOfRoute(db: Database, routeId: string): Promise<{ amountClass: string | null; clientTag: string | null; senderTag: string | null }> {
  const [row] = await db
    .select({
      destChainId: transfers.destChainId,
      destToken: transfers.destToken,
      output: transfers.quotedOutputAmount,
      rounding: transfers.roundingAmount,
      client: transfers.privacyClient,
      sender: transfers.depositSender,
    })
    .from(transfers)
    .where(eq(transfers.routeId, routeId));
  if (!row || row.rounding === null) return { amountClass: null, clientTag: null, senderTag: null };
  const amountClass = amountClassKey(row.destChainId, row.destToken, BigInt(row.output));
  const tag = (value: string | null) => (value === null ? null : createHash('sha256').update(`${value}|${amountClass}`).digest('hex').slice(0, 32));
  return { amountClass, clientTag: tag(row.client), senderTag: tag(row.sender?.toLowerCase() ?? null) };
}

/** Every note of the service of these classes: in the pool, withdrawn or ragequit. */
export async function notesOfClasses(db: Database, classes: string[]): Promise<ClassNote[]> {
  if (classes.length === 0) return [];
  const rows = await selectNotes(db).where(inArray(poolNotes.amountClass, classes));
  return asIdentities(rows.map(toClassNote));
}

/** The notes of these routes, as the set sees them. */
export async function notesOfRoutes(db: Database, routeIds: string[]): Promise<ClassNote[]> {
  if (routeIds.length === 0) return [];
  const rows = await selectNotes(db).where(inArray(poolNotes.routeId, routeIds));
  return rows.map(toClassNote);
}

/** A route's own note as the set sees it; null before it is recorded. */
export async function noteOfRoute(db: Database, routeId: string): Promise<ClassNote | null> {
  const [row] = await selectNotes(db).where(eq(poolNotes.routeId, routeId));
  return row ? toClassNote(row) : null;
}

/** Where a withdrawal stands among its class's: by the state it proved against, then by when it was mined (not yet: last). */
const placeOf = (n: { provedLeaves: number | null; withdrawnAt: Date | null; routeId: string }) =>
  [n.provedLeaves ?? Number.MAX_SAFE_INTEGER, n.withdrawnAt?.getTime() ?? Number.MAX_SAFE_INTEGER, n.routeId] as const;
const precedes = (a: ReturnType<typeof placeOf>, b: ReturnType<typeof placeOf>) => a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0);

/** The class's mined withdrawals other than `own`'s, before and after the place `own` takes (its own record, or `at`). */
function classWithdrawals(notes: readonly ClassNote[], own: ClassNote, at: { provedLeaves: number | null; withdrawnAt: Date | null } = own): ClassWithdrawals {
  const ownPlace = placeOf({ ...at, routeId: own.routeId });
  const mined = notes
    .filter((n) => n.routeId !== own.routeId && n.amountClass === own.amountClass && n.withdrawnAt !== null)
    .map((n) => ({ place: placeOf(n), withdrawal: { routeId: n.routeId, candidates: [n.routeId, ...(n.members ?? []).map((m) => m.routeId)] } }))
    .sort((a, b) => precedes(a.place, b.place));
  return {
    before: mined.filter((w) => precedes(w.place, ownPlace) < 0).map((w) => w.withdrawal),
    after: mined.filter((w) => precedes(w.place, ownPlace) > 0).map((w) => w.withdrawal),
  };
}

/**
 * The set of `own` if it withdrew `amount` now, proving against `state` (a leaf count of null: the pool as it is now,
 * after every withdrawal so far) in the exit epoch `timing` (none: a route from before exit epochs): its candidates
 * among the class's notes, and the size.
 */
export function setIfWithdrawnNow(
  own: ClassNote,
  notes: readonly ClassNote[],
  state: PoolStateView,
  proving: { leafCount: number | null; amount: bigint; timing?: ExitTiming },
): { members: SetMember[]; size: number } {
  own = amongNotes(own, notes);
  const withdrawals = classWithdrawals(notes, own, { provedLeaves: proving.leafCount, withdrawnAt: null });
  const members = unsettledMembers(anonymitySetMembers(own, notes, state, proving.amount, proving.timing), withdrawals);
  return { members, size: anonymitySetSize({ own: own.routeId, candidates: members.map((m) => m.routeId), withdrawals, clientOf: clientsOf(notes) }) };
}

/** Each note's client pseudonym, by route. */
function clientsOf(notes: readonly ClassNote[]): (routeId: string) => string | null | undefined {
  const clients = new Map(notes.map((n) => [n.routeId, n.client]));
  return (routeId) => clients.get(routeId);
}

/** What GET reports for a withdrawn route: its recorded candidates, without those ragequit since, among the class's withdrawals. */
export function reportedSize(own: ClassNote, notes: readonly ClassNote[]): number {
  own = amongNotes(own, notes);
  if (!own.members || own.amountClass === null) return 1;
  const ragequit = new Set(notes.filter((n) => n.ragequit).map((n) => n.routeId));
  return anonymitySetSize({
    own: own.routeId,
    candidates: own.members.map((m) => m.routeId),
    withdrawals: classWithdrawals(notes, own),
    clientOf: clientsOf(notes),
    excluded: ragequit,
  });
}

/**
 * The gate's view (activities/privacyWatcher.ts, and a route's own check): each note's review, and the set it would
 * leave with if its gate opened now (it would leave in the next exit epoch), counting the candidates the ASP's latest
 * root approves (every recorded note is in the pool's state tree; the withdrawal counts again against the exact roots,
 * amount and epoch it proves in). Records when a note is first seen approved.
 */
export async function setsNow(db: Database, pool: Pick<PrivacyPool, 'reviewMany'>, own: ClassNote[], rules?: ExitRules) {
  const classes = [...new Set(own.flatMap((n) => (n.amountClass === null ? [] : [n.amountClass])))];
  const notes = await notesOfClasses(db, classes);
  // Withdrawn notes were approved when they left (the ASP's set only grows); the ASP is asked about the rest.
  const asked = [...new Map([...own, ...notes].filter((n) => !n.ragequit && n.withdrawnAt === null).map((n) => [n.routeId, n])).values()];
  const reviewed = asked.length > 0 ? await pool.reviewMany(asked) : [];
  const reviews = new Map<string, NoteReview>(asked.map((n, i) => [n.routeId, reviewed[i] ?? 'pending']));
  const now = Date.now();
  const newlyApproved = asked.filter((n) => n.approvedAt === null && reviews.get(n.routeId) === 'approved');
  if (newlyApproved.length > 0) {
    await db
      .update(poolNotes)
      .set({ approvedAt: new Date(now) })
      .where(
        and(
          inArray(
            poolNotes.routeId,
            newlyApproved.map((n) => n.routeId),
          ),
          isNull(poolNotes.approvedAt),
        ),
      );
    for (const note of [...notes, ...own]) if (note.approvedAt === null && reviews.get(note.routeId) === 'approved') note.approvedAt = now;
  }
  const approved = new Set(notes.filter((n) => n.withdrawnAt !== null || reviews.get(n.routeId) === 'approved').map((n) => n.label));
  const view: PoolStateView = { inState: () => true, approved: (label) => approved.has(label) };
  const timing = rules ? nextExitEpoch(rules, now) : undefined;
  const sizes = new Map(own.map((n) => [n.routeId, setIfWithdrawnNow(n, notes, view, { leafCount: null, amount: 0n, ...(timing && { timing }) }).size]));
  return { reviews, sizes };
}

/**
 * Counts again the reports of the class's recent withdrawals: a withdrawal mined, or a note ragequit, changes what an
 * observer knows (a ragequit note was never spent; a new withdrawal may have spent any of its candidates).
 */
export async function recountClass(db: Database, amountClass: string | null): Promise<number> {
  if (amountClass === null) return 0;
  // One recount of a class at a time, each from what is recorded when it starts: the last one written saw everything.
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`anonymity-set:${amountClass}`}))`);
    const notes = asIdentities((await tx.select(noteColumns).from(poolNotes).where(eq(poolNotes.amountClass, amountClass))).map(toClassNote));
    const since = Date.now() - RECOUNT_WINDOW_MS;
    const reported = notes.filter((n) => n.withdrawnAt !== null && n.withdrawnAt.getTime() >= since && n.members !== null);
    for (const note of reported) {
      await tx
        .update(transfers)
        .set({ anonymitySet: reportedSize(note, notes), updatedAt: sql`now()` })
        .where(and(eq(transfers.routeId, note.routeId), isNotNull(transfers.anonymitySet)));
    }
    return reported.length;
  });
}
