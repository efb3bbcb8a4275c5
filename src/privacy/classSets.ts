/**
 * The anonymity set over one class's notes as the service records them (pool_notes): the class's withdrawals in the
 * order they left, the set of a route if it left in a given exit epoch, and the set GET reports once it did. Pure:
 * activities/anonymitySets.ts reads the notes, src/privacy/gate.ts decides gates with it, and the tests and the exit
 * simulation (bench/exits) drive it directly.
 */
import {
  type ClassWithdrawal,
  type ClassWithdrawals,
  clientIdentities,
  countAnonymitySet,
  anonymitySetMembers,
  type PoolNoteFacts,
  type PoolStateView,
  type SetCount,
  type SetInput,
  type SetMember,
  settled,
  type Voucher,
  unsettledMembers,
} from './anonymitySet.ts';

/** A note of the service as the set sees it, with what its withdrawal recorded. */
export interface ClassNote extends PoolNoteFacts {
  /** The deposit's sender as a pseudonym of the class (null when unknown). */
  sender: string | null;
  /** The partner that vouched for the route's user, as a pseudonym of the class, and the share of a set its users may fill. */
  voucher?: Voucher | null;
  /** When its withdrawal was mined (ms); null while in the pool. */
  withdrawnAt: number | null;
  /** The candidates counted when its withdrawal was proved (null before, and for routes older than that record)... */
  members: SetMember[] | null;
  /** ...the state tree's leaf count it proved against... */
  provedLeaves: number | null;
  /** ...and the exit epoch (start, ms) it was proved in (null for withdrawals older than the exit lottery). */
  exitEpochAt: number | null;
  /** Drawn to leave at this moment (ms) of the epoch `exitEpochAt` and not withdrawn yet; null when no exit is drawn. */
  exitAt: number | null;
}

/** Where a withdrawal stands among its class's: by the exit epoch it left in, the state it proved against, when it was mined. */
type Place = readonly [number, number, number, string];
const LAST = Number.MAX_SAFE_INTEGER;
const precedes = (a: Place, b: Place) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || (a[3] < b[3] ? -1 : a[3] > b[3] ? 1 : 0);
const placeOf = (n: Pick<ClassNote, 'exitEpochAt' | 'provedLeaves' | 'withdrawnAt' | 'routeId'>): Place => [
  n.exitEpochAt ?? n.withdrawnAt ?? LAST,
  n.provedLeaves ?? LAST,
  n.withdrawnAt ?? LAST,
  n.routeId,
];

/** The notes with `client` set to their identity (clientIdentities): one creator or one sender is one client. */
export function asIdentities<T extends ClassNote>(notes: readonly T[]): T[] {
  const identities = clientIdentities(notes);
  return notes.map((note) => ({ ...note, client: identities.get(note.routeId) ?? null }));
}

/** Each note's client pseudonym and voucher, by route. */
function clientsOf(notes: readonly ClassNote[]): Pick<SetInput, 'clientOf' | 'voucherOf'> {
  const byRoute = new Map(notes.map((n) => [n.routeId, n]));
  return { clientOf: (routeId) => byRoute.get(routeId)?.client, voucherOf: (routeId) => byRoute.get(routeId)?.voucher ?? null };
}

/** `own` as it stands among `notes` (its identity merged with theirs). */
const amongNotes = (own: ClassNote, notes: readonly ClassNote[]) => notes.find((n) => n.routeId === own.routeId) ?? own;

const inPool = (n: ClassNote) => n.withdrawnAt === null && !n.ragequit;

/**
 * The class's withdrawals other than `own`'s, before and after `at`: the mined ones with the candidates they recorded
 * and, with `drawn`, the exits drawn but not yet withdrawn, counted as if they had left with what they could spend in
 * their epoch now (so a gate opened now counts them as gone).
 */
function classWithdrawals(notes: readonly ClassNote[], own: ClassNote, at: Place, drawn?: PoolStateView): ClassWithdrawals {
  const withdrawals: Array<{ place: Place; withdrawal: ClassWithdrawal }> = [];
  for (const n of notes) {
    if (n.routeId === own.routeId || n.amountClass !== own.amountClass) continue;
    if (n.withdrawnAt !== null) {
      withdrawals.push({ place: placeOf(n), withdrawal: { routeId: n.routeId, candidates: [n.routeId, ...(n.members ?? []).map((m) => m.routeId)] } });
    } else if (drawn && inPool(n) && n.exitAt !== null && n.exitEpochAt !== null) {
      const candidates = anonymitySetMembers(n, notes, drawn, 0n, n.exitEpochAt).map((m) => m.routeId);
      withdrawals.push({ place: [n.exitEpochAt, LAST - 1, n.exitAt, n.routeId], withdrawal: { routeId: n.routeId, candidates: [n.routeId, ...candidates] } });
    }
  }
  withdrawals.sort((a, b) => precedes(a.place, b.place));
  return {
    before: withdrawals.filter((w) => precedes(w.place, at) < 0).map((w) => w.withdrawal),
    after: withdrawals.filter((w) => precedes(w.place, at) > 0).map((w) => w.withdrawal),
  };
}

/** How a route would leave: in the exit epoch starting at `exitEpochAt`, taking `amount`, proving against `leafCount` leaves (null: now). */
export interface Leaving {
  exitEpochAt: number;
  amount: bigint;
  leafCount?: number | null;
  /** Count the exits drawn but not yet withdrawn as gone (a gate's view). */
  countDrawn?: boolean;
}

/**
 * The set of `own` if it withdrew in the epoch `leaving.exitEpochAt` against `state`: its candidates (what a
 * withdrawal records) and the count. `own` is placed after every withdrawal of its epoch and of earlier ones.
 */
export function setIfLeaving(
  own: ClassNote,
  notes: readonly ClassNote[],
  state: PoolStateView,
  leaving: Leaving,
): { members: SetMember[]; count: SetCount; withdrawals: { before: number; settled: number } } {
  own = amongNotes(own, notes);
  const at: Place = [leaving.exitEpochAt, leaving.leafCount ?? LAST, LAST, own.routeId];
  const withdrawals = classWithdrawals(notes, own, at, leaving.countDrawn ? state : undefined);
  const members = unsettledMembers(anonymitySetMembers(own, notes, state, leaving.amount, leaving.exitEpochAt), withdrawals);
  const count = countAnonymitySet({ own: own.routeId, candidates: members.map((m) => m.routeId), withdrawals, ...clientsOf(notes) });
  return { members, count, withdrawals: { before: withdrawals.before.length, settled: settled(withdrawals.before).withdrawals } };
}

/** What GET reports for a withdrawn route: its recorded candidates, without those ragequit since, among the class's withdrawals. */
export function reportedCount(own: ClassNote, notes: readonly ClassNote[]): SetCount {
  own = amongNotes(own, notes);
  if (!own.members || own.amountClass === null) return { size: 1, method: 'nested' };
  return countAnonymitySet({
    own: own.routeId,
    candidates: own.members.map((m) => m.routeId),
    withdrawals: classWithdrawals(notes, own, placeOf(own)),
    ...clientsOf(notes),
    excluded: new Set(notes.filter((n) => n.ragequit).map((n) => n.routeId)),
  });
}

/** The class's mined withdrawals in the order they left, with the candidates each recorded. */
function minedWithdrawals(notes: readonly ClassNote[]): ClassWithdrawal[] {
  return notes
    .filter((n) => n.withdrawnAt !== null)
    .map((n) => ({ place: placeOf(n), withdrawal: { routeId: n.routeId, candidates: [n.routeId, ...(n.members ?? []).map((m) => m.routeId)] } }))
    .sort((a, b) => precedes(a.place, b.place))
    .map((w) => w.withdrawal);
}

/**
 * The routes whose reports can no longer change: the class's leading withdrawals that could only have taken exactly
 * the notes they name (their own), which nothing later can touch. A recount leaves them out.
 */
export function settledRoutes(notes: readonly ClassNote[]): Set<string> {
  return settled(minedWithdrawals(notes)).notes;
}

/**
 * The notes that may still be in the pool as far as an observer can tell: not ragequit, and not among the notes the
 * class's mined withdrawals certainly spent (their settled prefix). Unlike "not withdrawn", this says nothing the
 * chain does not, so the class's lottery may depend on it.
 */
export function openNotes<T extends ClassNote>(notes: readonly T[]): T[] {
  const spent = settled(minedWithdrawals(notes)).notes;
  return notes.filter((n) => !n.ragequit && !spent.has(n.routeId));
}

/** The earliest gate among the open notes (openNotes) that are gated: a note gated then may still be in the pool. Null: none. */
export function oldestOpenGate(notes: readonly ClassNote[]): number | null {
  let oldest: number | null = null;
  for (const n of openNotes(notes)) if (n.gatedAt !== null && (oldest === null || n.gatedAt < oldest)) oldest = n.gatedAt;
  return oldest;
}
