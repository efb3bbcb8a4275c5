/**
 * The anonymity set: the one definition, used by the privacy gate (activities/privacyWatcher.ts), by the withdrawal
 * itself (activities/pool.ts) and by the report GET shows (docs/privacy.md, "The anonymity set").
 *
 * Candidates. A route's withdrawal could have spent, as far as an observer holding every public log can tell, its own
 * note or a note of another route of the service that is
 * - of the same amount class (src/privacy/amountClass.ts): other classes withdraw and pay other amounts;
 * - in the pool state the withdrawal proves against (a later deposit cannot be the spent note);
 * - approved in the ASP's set at the root the withdrawal proves against (an unapproved note cannot be withdrawn);
 * - never ragequit (a ragequit shows its note was not the spent one: reports are counted again when a peer ragequits).
 * Notes of other users of the pool do not count: the shared gas account and relayer mark which deposits and
 * withdrawals are the service's.
 *
 * Earlier withdrawals. Candidates that an earlier withdrawal of the class may already have spent hide less: the
 * observer knows that each earlier withdrawal took one of its own candidates, just not which. Taking every matching
 * of withdrawals to candidates as equally likely, with each withdrawal's candidates as recorded when it was proved,
 * the withdrawal `i` of the class had f_i = |S_i| − (i − 1) notes left to choose from, and
 *   P(our withdrawal spent D) = Π_{i = first withdrawal that could have spent D … last before ours} (1 − 1/f_i) × 1/f_ours.
 * The set reported is ⌊1 / the largest such probability⌋, also over the other direction (which withdrawal spent our
 * note): the best guess an observer has, either way, is right at most once in that many. Routes that leave together
 * report the same set (three of one class: 3, 3, 3), while a route whose peers left before it deposited reports less.
 *
 * Clients. An observer that is one of the service's clients knows its own routes (both ends): the set reported is the
 * smallest over taking any one client's routes away (the route's own client's other routes included), so one client
 * cannot fill a victim's set alone. It counts the route itself: 1 means nobody else.
 */

/** What the set needs to know of one note of the service. */
export interface PoolNoteFacts {
  routeId: string;
  /** src/privacy/amountClass.ts amountClassKey; null for a note of a route created before amount classes (a class of its own). */
  amountClass: string | null;
  commitment: string;
  label: string;
  /** The creating client's keyed hash; null when unknown (all unknown clients count as one). */
  client: string | null;
  /** Went back to its depositor: never the note anyone withdrew. */
  ragequit: boolean;
}

/** The pool as a withdrawal proves against it (or, for the gate, as it is now). */
export interface PoolStateView {
  /** Whether the commitment is a leaf of the state tree. */
  inState(commitment: string): boolean;
  /** Whether the label is in the ASP's approved set. */
  approved(label: string): boolean;
}

/** A candidate other than the route itself: its route and its client, numbered within this set (0 = the route's own client). */
export interface SetMember {
  routeId: string;
  client: number;
}

/** An earlier withdrawal of the class, with every candidate it was proved with (itself included). */
export interface EarlierWithdrawal {
  routeId: string;
  candidates: readonly string[];
}

const UNKNOWN_CLIENT = '\u0000unknown';

/** The candidates of `own` among `notes` in `state`, each with its client numbered within the set (0 = own's client). */
export function anonymitySetMembers(own: PoolNoteFacts, notes: readonly PoolNoteFacts[], state: PoolStateView): SetMember[] {
  if (own.amountClass === null) return [];
  const clients = new Map<string, number>([[own.client ?? UNKNOWN_CLIENT, 0]]);
  const members: SetMember[] = [];
  for (const note of notes) {
    if (note.routeId === own.routeId || note.amountClass !== own.amountClass || note.ragequit) continue;
    if (!state.inState(note.commitment) || !state.approved(note.label)) continue;
    const client = note.client ?? UNKNOWN_CLIENT;
    if (!clients.has(client)) clients.set(client, clients.size);
    members.push({ routeId: note.routeId, client: clients.get(client)! });
  }
  return members;
}

/** A probability as an exact fraction. */
interface Fraction {
  n: bigint;
  d: bigint;
}
const times = (p: Fraction, n: number, d: number): Fraction => ({ n: p.n * BigInt(n), d: p.d * BigInt(d) });
const larger = (a: Fraction, b: Fraction) => (a.n * b.d >= b.n * a.d ? a : b);

/** The set of `own` against `members` with `earlier` withdrawals of the class before it, none of the routes in `without` counted. */
function setWithout(own: string, members: readonly SetMember[], earlier: readonly EarlierWithdrawal[], without: ReadonlySet<string>): number {
  const universe = new Set([own, ...members.map((m) => m.routeId).filter((id) => !without.has(id))]);
  const chain = earlier
    .filter((w) => !without.has(w.routeId))
    .map((w) => w.candidates.filter((id) => universe.has(id)))
    .filter((candidates) => candidates.length > 0);
  const ours = chain.length;
  // left[i]: the notes withdrawal i had to choose from; ours is the last.
  const left = [...chain.map((candidates, i) => new Set(candidates).size - i), universe.size - ours];
  if (left.some((f) => f <= 0)) return 1;
  // level: the first withdrawal that could have spent a note (ours for a note no earlier one could).
  const level = new Map<string, number>();
  chain.forEach((candidates, i) => {
    for (const id of candidates) if (!level.has(id)) level.set(id, i);
  });
  const levelOf = (note: string) => level.get(note) ?? ours;
  /** P(withdrawal `j` spent a note of level `from`): it survived every withdrawal from `from` to j − 1, then j chose it. */
  const spentBy = (from: number, j: number): Fraction => {
    let p: Fraction = { n: 1n, d: BigInt(left[j]!) };
    for (let i = from; i < j; i++) p = times(p, left[i]! - 1, left[i]!);
    return p;
  };
  // Our withdrawal, whichever note: the latest level holds the likeliest notes (the fewest withdrawals to survive).
  let worst = spentBy(Math.max(...[...universe].map(levelOf)), ours);
  // Our note, whichever withdrawal took it.
  for (let j = levelOf(own); j <= ours; j++) worst = larger(worst, spentBy(levelOf(own), j));
  return Math.max(1, Number(worst.d / worst.n));
}

/**
 * The anonymity set of route `own` (module comment): its candidates `members`, the class's `earlier` withdrawals in
 * the order they were mined, and routes `excluded` since (ragequit). The smallest over taking any one client away.
 */
export function anonymitySetSize(
  own: string,
  members: readonly SetMember[],
  earlier: readonly EarlierWithdrawal[] = [],
  excluded: ReadonlySet<string> = new Set(),
): number {
  const counted = members.filter((m) => !excluded.has(m.routeId));
  const clients = new Set(counted.map((m) => m.client));
  const sizes = [setWithout(own, counted, earlier, excluded)];
  for (const client of clients) {
    const theirs = new Set([...excluded, ...counted.filter((m) => m.client === client).map((m) => m.routeId)]);
    sizes.push(setWithout(own, counted, earlier, theirs));
  }
  return Math.min(...sizes);
}
