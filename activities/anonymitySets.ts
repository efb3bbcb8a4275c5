import { createHash, randomBytes } from 'node:crypto';
import { and, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Address } from 'viem';
import type { Database, Db } from '../src/db/client.ts';
import { classExitEpochs, poolNotes, transfers } from '../src/db/schema.ts';
import type { ExitDraw, NoteReview, PrivacyObservation } from '../src/domain/observations.ts';
import { amountClassKey } from '../src/privacy/amountClass.ts';
import type { PoolStateView } from '../src/privacy/anonymitySet.ts';
import { asIdentities, type ClassNote, oldestOpenGate, openNotes, reportedCount, settledRoutes } from '../src/privacy/classSets.ts';
import { nextEpochStart } from '../src/privacy/exitEpochs.ts';
import { type ClassEpoch, classEpoch, classTarget, drawExit, type PrivacyRules, trafficWindow } from '../src/privacy/exitLottery.ts';
import { decideGates } from '../src/privacy/gate.ts';
import type { PrivacyPool } from '../src/providers/privacyPool.ts';

/**
 * The database side of the privacy gate, the exit lottery and the anonymity set (src/privacy/ holds the rules): the
 * service's notes of a class with their clients' pseudonyms, the pass that opens gates and draws exits, and the
 * recount of the reports a new withdrawal or a ragequit changes.
 */

/** Reports of withdrawals older than this are not counted again (the class's later events barely move them). */
const RECOUNT_WINDOW_MS = 30 * 24 * 3600 * 1000;

/** A note of the service as the set sees it, with the pool's asset, its gate and lottery state, and its route's minimum. */
export interface StoredNote extends ClassNote {
  asset: Address;
  gateReason: 'set-reached' | 'max-wait' | null;
  exitSeed: string | null;
  /** The anonymity set the route asked for (transfers.min_anonymity_set; 1 when it asked for nothing). */
  minimum: number;
  /** What the last gate decision counted: the set the route would leave with now (the report's forecast). */
  gateSet: number | null;
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
  voucher: poolNotes.voucherTag,
  voucherShareBps: poolNotes.voucherShareBps,
  withdrawnAt: poolNotes.withdrawnAt,
  ragequitAt: poolNotes.ragequitAt,
  depositedAt: poolNotes.depositedAt,
  approvedAt: poolNotes.approvedAt,
  members: poolNotes.anonymityMembers,
  provedLeaves: poolNotes.provedLeaves,
  gatedAt: poolNotes.gatedAt,
  gateReason: poolNotes.gateReason,
  gateLog: poolNotes.gateLog,
  exitSeed: poolNotes.exitSeed,
  exitAt: poolNotes.exitAt,
  exitEpochAt: poolNotes.exitEpochAt,
  minimum: transfers.minAnonymitySet,
};

type NoteRow = {
  [K in keyof typeof noteColumns]: (typeof noteColumns)[K]['_']['notNull'] extends true
    ? (typeof noteColumns)[K]['_']['data']
    : (typeof noteColumns)[K]['_']['data'] | null;
};

const ms = (date: Date | null) => date?.getTime() ?? null;

function toStoredNote(row: NoteRow): StoredNote {
  return {
    routeId: row.routeId,
    asset: row.asset as Address,
    amountClass: row.amountClass,
    commitment: row.commitment,
    label: row.label,
    value: BigInt(row.value),
    client: row.client,
    sender: row.sender,
    voucher: row.voucher === null ? null : { tag: row.voucher, shareBps: row.voucherShareBps ?? 0 },
    ragequit: row.ragequitAt !== null,
    depositedAt: row.depositedAt.getTime(),
    approvedAt: ms(row.approvedAt),
    gatedAt: ms(row.gatedAt),
    withdrawnAt: ms(row.withdrawnAt),
    members: row.members,
    provedLeaves: row.provedLeaves,
    exitEpochAt: ms(row.exitEpochAt),
    exitAt: ms(row.exitAt),
    gateReason: row.gateReason,
    exitSeed: row.exitSeed,
    minimum: row.minimum ?? 1,
    gateSet: row.gateLog?.set ?? null,
  };
}

const selectNotes = (db: Db) => db.select(noteColumns).from(poolNotes).leftJoin(transfers, eq(transfers.routeId, poolNotes.routeId));

/**
 * The class of a route's note, from its transfer (null for a transfer quoted before amount classes), and its client's
 * pseudonym in that class: SHA-256 of the client's keyed hash and the class, so it tells one client's notes of a class
 * apart from another's and names no one (the hash's key is CLIENT_HASH_KEY).
 */
export async function classOfRoute(db: Database, routeId: string): Promise<RouteClass> {
  const [row] = await db
    .select({
      destChainId: transfers.destChainId,
      destToken: transfers.destToken,
      output: transfers.quotedOutputAmount,
      rounding: transfers.roundingAmount,
      client: transfers.privacyClient,
      sender: transfers.depositSender,
      voucher: transfers.privacyVoucher,
      voucherShareBps: transfers.privacyVoucherShareBps,
    })
    .from(transfers)
    .where(eq(transfers.routeId, routeId));
  if (!row || row.rounding === null) return { amountClass: null, clientTag: null, senderTag: null, voucherTag: null, voucherShareBps: null };
  const amountClass = amountClassKey(row.destChainId, row.destToken, BigInt(row.output));
  const tag = (value: string | null) => (value === null ? null : createHash('sha256').update(`${value}|${amountClass}`).digest('hex').slice(0, 32));
  return {
    amountClass,
    clientTag: tag(row.client),
    senderTag: tag(row.sender?.toLowerCase() ?? null),
    voucherTag: tag(row.voucher),
    voucherShareBps: row.voucher === null ? null : row.voucherShareBps,
  };
}

/** A route's class and its pseudonyms in the class: its client, its deposit's sender, and the partner that vouched for its user. */
export interface RouteClass {
  amountClass: string | null;
  clientTag: string | null;
  senderTag: string | null;
  voucherTag: string | null;
  voucherShareBps: number | null;
}

/** Every note of the service of these classes (in the pool, withdrawn or ragequit), each with its client identity. */
export async function notesOfClasses(db: Db, classes: string[]): Promise<StoredNote[]> {
  if (classes.length === 0) return [];
  const rows = await selectNotes(db).where(inArray(poolNotes.amountClass, classes));
  return asIdentities(rows.map(toStoredNote));
}

/** The notes of these routes, as the set sees them. */
export async function notesOfRoutes(db: Db, routeIds: string[]): Promise<StoredNote[]> {
  if (routeIds.length === 0) return [];
  const rows = await selectNotes(db).where(inArray(poolNotes.routeId, routeIds));
  return rows.map(toStoredNote);
}

/** A route's own note as the set sees it; null before it is recorded. */
export async function noteOfRoute(db: Db, routeId: string): Promise<StoredNote | null> {
  const [row] = await selectNotes(db).where(eq(poolNotes.routeId, routeId));
  return row ? toStoredNote(row) : null;
}

/** What a pass tells each note it looked at (PrivacyObservation, as the watcher signals it). */
export type PassResult = Map<string, PrivacyObservation>;

/**
 * One pass of the privacy gate over the classes of `own` (the privacy watcher's, for every note in the pool, or a
 * route's own check): asks the ASP about the classes' notes still in the pool (one read), records when a note is first
 * seen approved, then, class by class and one pass of a class at a time (a lock per class), opens the gates that may
 * open for the next exit epoch (src/privacy/gate.ts), writes the class's lottery for that epoch once, and draws the
 * exits of its gated notes in it (src/privacy/exitLottery.ts). Every decision is written before anyone is told, and a
 * second pass over the same moment decides the same. Returns what each note of `own` should know now.
 */
export async function passClasses(db: Database, pool: Pick<PrivacyPool, 'reviewMany'>, own: readonly StoredNote[], rules: PrivacyRules): Promise<PassResult> {
  const classes = [...new Set(own.flatMap((n) => (n.amountClass === null ? [] : [n.amountClass])))];
  const notes = await notesOfClasses(db, classes);
  // Withdrawn notes were approved when they left (the ASP's set only grows); the ASP is asked about the rest.
  const asked = [...new Map([...own, ...notes].filter((n) => !n.ragequit && n.withdrawnAt === null).map((n) => [n.routeId, n])).values()];
  const reviewed = asked.length > 0 ? await pool.reviewMany(asked) : [];
  const reviews = new Map<string, NoteReview>(asked.map((n, i) => [n.routeId, reviewed[i] ?? 'pending']));
  const now = Date.now();
  const newlyApproved = asked.filter((n) => n.approvedAt === null && reviews.get(n.routeId) === 'approved').map((n) => n.routeId);
  if (newlyApproved.length > 0) {
    await db
      .update(poolNotes)
      .set({ approvedAt: new Date(now) })
      .where(and(inArray(poolNotes.routeId, newlyApproved), isNull(poolNotes.approvedAt)));
  }
  const approved = new Set(notes.filter((n) => n.withdrawnAt !== null || reviews.get(n.routeId) === 'approved').map((n) => n.label));
  const state: PoolStateView = { inState: () => true, approved: (label) => approved.has(label) };
  for (const amountClass of classes) await passClass(db, amountClass, state, now, rules);

  const after = new Map(
    (
      await notesOfRoutes(
        db,
        own.map((n) => n.routeId),
      )
    ).map((n) => [n.routeId, n]),
  );
  const epochAt = nextEpochStart(now, rules.epochSeconds) - rules.epochSeconds * 1000;
  return new Map(
    own.map((n) => {
      const note = after.get(n.routeId) ?? n;
      const exit = note.exitAt !== null && note.exitEpochAt !== null && note.exitEpochAt >= epochAt ? drawOf(note, rules) : undefined;
      return [n.routeId, { review: reviews.get(n.routeId) ?? 'pending', anonymitySet: note.gateSet ?? 1, ...(exit && { exit }) }];
    }),
  );
}

/** The exit drawn for a note, as the route is told it. */
function drawOf(note: StoredNote, rules: PrivacyRules): ExitDraw {
  return { at: note.exitAt!, epochStartsAt: note.exitEpochAt!, epochSeconds: rules.epochSeconds, gate: note.gateReason ?? 'set-reached' };
}

/** One class's gates and draws for the next exit epoch, under the class's lock, from what is recorded now. */
async function passClass(db: Database, amountClass: string, state: PoolStateView, now: number, rules: PrivacyRules): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`exit-lottery:${amountClass}`}))`);
    const notes = await notesOfClasses(tx, [amountClass]);
    const minimums = new Map(notes.map((n) => [n.routeId, n.minimum]));
    for (const decision of decideGates({ notes, state, now, rules, minimumOf: (id) => minimums.get(id) ?? 1 })) {
      const opening = decision.opens ? { gatedAt: new Date(decision.epochAt), gateReason: decision.opens, exitSeed: randomBytes(32).toString('hex') } : {};
      await tx
        .update(poolNotes)
        .set({ gateLog: decision.log, ...opening })
        .where(and(eq(poolNotes.routeId, decision.routeId), isNull(poolNotes.gatedAt)));
    }

    const epochAt = nextEpochStart(now, rules.epochSeconds);
    const gated = (await notesOfClasses(tx, [amountClass])).filter((n) => n.withdrawnAt === null && !n.ragequit && n.gatedAt !== null && n.gatedAt <= epochAt);
    if (gated.length === 0) return;
    const epoch = await classEpochOf(tx, rules, amountClass, epochAt, notes);
    // A draw for this epoch or the next is live (its route acts on it); an older one was not acted on and is drawn anew.
    const liveFrom = epochAt - rules.epochSeconds * 1000;
    for (const note of gated) {
      if (note.exitAt !== null && note.exitEpochAt !== null && note.exitEpochAt >= liveFrom) continue;
      if (note.exitSeed === null) continue;
      const exit = drawExit(epoch, note.exitSeed, rules.epochSeconds);
      if (!exit) continue;
      await tx
        .update(poolNotes)
        .set({ exitAt: new Date(exit.at), exitEpochAt: new Date(epochAt) })
        .where(and(eq(poolNotes.routeId, note.routeId), isNull(poolNotes.withdrawnAt)));
    }
  });
}

/**
 * The class's lottery for the epoch starting at `epochAt`: as written by the first pass that drew for it, else
 * written now from the class's traffic (its pool entries in the window), the minimums of the routes that may still be
 * in the pool, and its oldest gate that may still be open (a flush when that is PRIVACY_EXIT_FLUSH_SECONDS old).
 */
async function classEpochOf(tx: Db, rules: PrivacyRules, amountClass: string, epochAt: number, notes: readonly StoredNote[]): Promise<ClassEpoch> {
  const window = trafficWindow(rules, epochAt);
  const open = openNotes(notes);
  const epoch = classEpoch(rules, amountClass, epochAt, {
    entries: notes.filter((n) => n.depositedAt >= window.from && n.depositedAt < window.to).length,
    target: classTarget(open.map((n) => n.minimum)),
    oldestOpenGateAt: oldestOpenGate(notes),
  });
  await tx
    .insert(classExitEpochs)
    .values({ ...epoch, startsAt: new Date(epochAt) })
    .onConflictDoNothing();
  const [row] = await tx
    .select()
    .from(classExitEpochs)
    .where(and(eq(classExitEpochs.amountClass, amountClass), eq(classExitEpochs.startsAt, new Date(epochAt))));
  return { ...row!, startsAt: row!.startsAt.getTime() };
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
    const notes = await notesOfClasses(tx, [amountClass]);
    const since = Date.now() - RECOUNT_WINDOW_MS;
    const final = settledRoutes(notes);
    const reported = notes.filter((n) => n.withdrawnAt !== null && n.withdrawnAt >= since && n.members !== null && !final.has(n.routeId));
    for (const note of reported) {
      await tx
        .update(transfers)
        .set({ anonymitySet: reportedCount(note, notes).size, updatedAt: sql`now()` })
        .where(and(eq(transfers.routeId, note.routeId), isNotNull(transfers.anonymitySet)));
    }
    return reported.length;
  });
}
