/**
 * The anonymity set: the one definition, used by the privacy gate (activities/privacyWatcher.ts), by the withdrawal
 * itself (activities/pool.ts) and by the report GET shows (docs/privacy.md, "The anonymity set").
 *
 * Candidates. A route's withdrawal could have spent, as far as an observer holding every public log can tell, its own
 * note or a note of another route of the service that is
 * - of the same amount class (src/privacy/amountClass.ts): other classes withdraw and pay other amounts;
 * - in the pool state the withdrawal proves against (a later deposit cannot be the spent note);
 * - approved in the ASP's set at the root the withdrawal proves against (an unapproved note cannot be withdrawn);
 * - worth at least what the withdrawal takes (note values are public);
 * - never ragequit (a ragequit shows its note was not the spent one: reports are counted again when a peer ragequits);
 * - able to leave in the withdrawal's exit epoch (docs/privacy.md, "Exit epochs"): a route leaves in the epoch after the
 *   one in which its gate opened, so a note approved only once the exit epoch began cannot be the spent one, nor can a
 *   note that had waited its longest before the epoch before (it would have left already; one still in the pool is
 *   stuck, and an observer counts it out).
 * Notes of other users of the pool do not count: the shared gas account and relayer mark which deposits and
 * withdrawals are the service's.
 *
 * Other withdrawals. Each withdrawal of the class took one of its own candidates (recorded when it was proved), and
 * the observer does not know which. Taking every matching of withdrawals to candidates as equally likely, and the
 * withdrawals in the order of the pool state they proved against (each could spend what the ones before could), the
 * withdrawal at place i chose among f_i = |candidates_i| − (earlier withdrawals that could take one of them) notes
 * not yet taken, and
 *   P(withdrawal j spent note D) = Π_{i < j, D a candidate of i} (1 − 1/f_i) × 1/f_j.
 * The set reported is ⌊1 / the largest such probability⌋ over both directions: which note the route's withdrawal
 * spent, and which withdrawal spent the route's note (any of the class's, before or after it). The observer's best
 * guess, either way, is right at most once in that many. Routes that leave together report the same set (three of a
 * class from three clients: 2, 2, 2 — see below), a route whose peers left before it deposited reports less. Leading
 * withdrawals that together could only have taken exactly their own candidates are settled: those notes are spent,
 * and both drop out (which keeps the count small however long the class's history grows).
 *
 * Clients. An observer that is one of the service's clients knows its own routes (both ends): the set reported is the
 * smallest over taking any one client's routes away (the route's own client's other routes included), so one client
 * cannot fill a victim's set alone. A client is whoever created the route (its API key, else its address) or sent its
 * deposit (the sender's address, which the chain shows): routes that share either are one client (`clientIdentities`).
 * It counts the route itself: 1 means nobody else.
 */

import { couldLeaveIn, type ExitTiming } from './exitEpochs.ts';

/** What the set needs to know of one note of the service. */
export interface PoolNoteFacts {
  routeId: string;
  /** src/privacy/amountClass.ts amountClassKey; null for a note of a route created before amount classes (a class of its own). */
  amountClass: string | null;
  commitment: string;
  label: string;
  /** The note's value (public: its deposit shows it). */
  value: bigint;
  /** The creating client's pseudonym within the class; null when unknown (all unknown clients count as one). */
  client: string | null;
  /** Went back to its depositor: never the note anyone withdrew. */
  ragequit: boolean;
  /** When its deposit was mined (ms since the epoch). */
  depositedAt: number;
  /** When the service first saw the ASP approve it (ms; never before the public root did); null while not seen. */
  approvedAt: number | null;
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

/** Another withdrawal of the class, with every candidate it was proved with (itself included). */
export interface ClassWithdrawal {
  routeId: string;
  candidates: readonly string[];
}

/** The class's other withdrawals, in the order of the state they proved against: before the route's, and after it. */
export interface ClassWithdrawals {
  before: readonly ClassWithdrawal[];
  after: readonly ClassWithdrawal[];
}

const UNKNOWN_CLIENT = '\u0000unknown';

/**
 * The candidates of `own` among `notes` in `state` worth at least `minValue` (and, for a withdrawal in an exit epoch,
 * able to leave in it), each with its client numbered within the set (0 = own's client).
 */
export function anonymitySetMembers(
  own: PoolNoteFacts,
  notes: readonly PoolNoteFacts[],
  state: PoolStateView,
  minValue = 0n,
  timing?: ExitTiming,
): SetMember[] {
  if (own.amountClass === null) return [];
  const clients = new Map<string, number>([[own.client ?? UNKNOWN_CLIENT, 0]]);
  const members: SetMember[] = [];
  for (const note of notes) {
    if (note.routeId === own.routeId || note.amountClass !== own.amountClass || note.ragequit || note.value < minValue) continue;
    if (!state.inState(note.commitment) || !state.approved(note.label)) continue;
    if (timing && !couldLeaveIn(note, timing)) continue;
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
const ZERO: Fraction = { n: 0n, d: 1n };
const larger = (a: Fraction, b: Fraction) => (a.n * b.d >= b.n * a.d ? a : b);

/** The leading withdrawals that could only have taken exactly their own candidates, and those notes: all settled. */
function settledPrefix(before: readonly ClassWithdrawal[], without: ReadonlySet<string>): { withdrawals: number; notes: Set<string> } {
  const union = new Set<string>();
  let settled = { withdrawals: 0, notes: new Set<string>() };
  before.forEach((w, i) => {
    for (const id of w.candidates) if (!without.has(id)) union.add(id);
    if (union.size === i + 1) settled = { withdrawals: i + 1, notes: new Set(union) };
  });
  return settled;
}

/** Everything the size of one route's set is counted from. */
export interface SetInput {
  own: string;
  /** The candidates of the route's own withdrawal, itself left out (recorded when it was proved, or what it would have now). */
  candidates: readonly string[];
  /** The class's other withdrawals, in the order of the pool state they proved against. */
  withdrawals?: ClassWithdrawals;
  /** Each route's client, as a pseudonym valid in the class; null or unknown routes: all one unknown client. */
  clientOf?: (routeId: string) => string | null | undefined;
  /** Routes whose notes never were anyone's to spend (ragequit). */
  excluded?: ReadonlySet<string>;
}

/** The set of `own` with every route in `without` taken away (its note and its withdrawal). */
function setWithout(input: SetInput, without: ReadonlySet<string>): number {
  const { own } = input;
  const gone = (id: string) => id !== own && without.has(id);
  const before = (input.withdrawals?.before ?? []).filter((w) => !gone(w.routeId));
  const settled = settledPrefix(before, without);
  const open = (candidates: readonly string[]) => new Set(candidates.filter((id) => !gone(id) && !settled.notes.has(id)));
  const ours = open([own, ...input.candidates]);
  const chain = [
    ...before.slice(settled.withdrawals).map((w) => open(w.candidates)),
    ours,
    ...(input.withdrawals?.after ?? []).filter((w) => !gone(w.routeId)).map((w) => open(w.candidates)),
  ].filter((candidates) => candidates.size > 0);
  const at = chain.indexOf(ours);
  // The notes each withdrawal had left to choose from: its candidates less one for every earlier withdrawal that could
  // have taken one of them (all of them, when each could spend what the ones before could).
  const left = chain.map((candidates, i) => candidates.size - chain.slice(0, i).filter((earlier) => [...earlier].some((id) => candidates.has(id))).length);
  if (left.some((f) => f <= 0)) return 1;
  /** P(withdrawal `j` spent `note`): every earlier withdrawal that could have taken it did not, then j chose it. */
  const spentBy = (note: string, j: number): Fraction => {
    if (!chain[j]!.has(note)) return ZERO;
    let p: Fraction = { n: 1n, d: BigInt(left[j]!) };
    for (let i = 0; i < j; i++) if (chain[i]!.has(note)) p = { n: p.n * BigInt(left[i]! - 1), d: p.d * BigInt(left[i]!) };
    return p;
  };
  let worst = ZERO;
  for (const note of ours) worst = larger(worst, spentBy(note, at));
  for (let j = 0; j < chain.length; j++) worst = larger(worst, spentBy(own, j));
  return worst.n === 0n ? ours.size : Math.max(1, Number(worst.d / worst.n));
}

/** The candidates that leading withdrawals have not certainly spent: what a withdrawal records (its record stays small). */
export function unsettledMembers(members: readonly SetMember[], withdrawals: ClassWithdrawals): SetMember[] {
  const { notes } = settledPrefix(withdrawals.before, new Set());
  return members.filter((m) => !notes.has(m.routeId));
}

/**
 * The anonymity set of a route (module comment): the smallest over taking away nobody, or any one client's routes
 * (notes and withdrawals; the route's own client's other routes too).
 */
export function anonymitySetSize(input: SetInput): number {
  const excluded = input.excluded ?? new Set<string>();
  const routes = new Set([
    ...input.candidates,
    ...(input.withdrawals?.before ?? []).flatMap((w) => w.candidates),
    ...(input.withdrawals?.after ?? []).flatMap((w) => w.candidates),
  ]);
  routes.delete(input.own);
  const clientOf = (id: string) => input.clientOf?.(id) ?? UNKNOWN_CLIENT;
  const byClient = new Map<string, string[]>();
  for (const id of routes) byClient.set(clientOf(id), [...(byClient.get(clientOf(id)) ?? []), id]);
  const sizes = [setWithout(input, excluded)];
  for (const theirs of byClient.values()) sizes.push(setWithout(input, new Set([...excluded, ...theirs])));
  return Math.min(...sizes);
}

/**
 * Who is one client: routes that share the creating client's pseudonym or the deposit sender's are one, and so, in
 * turn, are the routes those share one with (connected components). Returns each route's identity, null when both are
 * unknown (all unknown clients count as one).
 */
export function clientIdentities(notes: ReadonlyArray<{ routeId: string; client: string | null; sender: string | null }>): Map<string, string | null> {
  const parent = new Map<string, string>();
  const find = (key: string): string => {
    let root = key;
    while (parent.get(root) !== root) root = parent.get(root)!;
    // Path compression: every key on the way points at the root.
    for (let at = key; at !== root; ) {
      const next = parent.get(at)!;
      parent.set(at, root);
      at = next;
    }
    return root;
  };
  const keysOf = (note: { client: string | null; sender: string | null }) => [
    ...(note.client !== null ? [`client:${note.client}`] : []),
    ...(note.sender !== null ? [`sender:${note.sender}`] : []),
  ];
  for (const note of notes) {
    const keys = keysOf(note);
    for (const key of keys) if (!parent.has(key)) parent.set(key, key);
    for (const key of keys.slice(1)) {
      const [a, b] = [find(keys[0]!), find(key)];
      if (a !== b) parent.set(b, a);
    }
  }
  return new Map(notes.map((note) => [note.routeId, keysOf(note).length > 0 ? find(keysOf(note)[0]!) : null]));
}
