/**
 * The anonymity set: the one definition, used by the gate (src/privacy/gate.ts), by the withdrawal itself
 * (activities/pool.ts) and by the report GET shows (docs/privacy.md, "The anonymity set").
 *
 * Candidates. A route's withdrawal could have spent, as far as an observer holding every public log and the service's
 * published exit rule can tell, its own note or a note of another route of the service that is
 * - of the same amount class (src/privacy/amountClass.ts): other classes withdraw and pay other amounts;
 * - in the pool state the withdrawal proves against (a later deposit cannot be the spent note);
 * - approved in the ASP's set at the root the withdrawal proves against (an unapproved note cannot be withdrawn);
 * - worth at least what the withdrawal takes (note values are public);
 * - never ragequit (a ragequit shows its note was not the spent one: reports are counted again when a peer ragequits);
 * - gated by the withdrawal's exit epoch: a note may leave only from the epoch after its gate opened
 *   (src/privacy/gate.ts), so a note whose gate was still closed (not yet approved, too young, or waiting for a larger
 *   set of its own) cannot be the spent one. Once gated, every note of the class faces the same chance of leaving in
 *   each epoch (src/privacy/exitLottery.ts), so one that stayed is as likely to be spent later as one gated just now.
 * Notes of other users of the pool do not count: the shared gas account and relayer mark which deposits and
 * withdrawals are the service's.
 *
 * Other withdrawals. Each withdrawal of the class took one of its own candidates (recorded when it was proved), and
 * the observer does not know which. Under the exit lottery every matching of withdrawals to distinct candidates is
 * equally likely (each note's chance to stay or leave in an epoch is the class's, whichever note it is), so the odds
 * are counts of matchings (src/privacy/matchings.ts): by a closed form when the candidate sets nest in the order the
 * withdrawals left (gates open in time order, so they do unless a note's value excluded it), else by counting the
 * matchings of the withdrawals and notes involved; where those are too many to count, the set is reported as 1.
 * The set reported is ⌊1 / the largest such probability⌋ over both directions: which note the route's withdrawal
 * spent, and which withdrawal spent the route's note (any of the class's, before or after it). The observer's best
 * guess, either way, is right at most once in that many. Leading withdrawals that together could only have taken
 * exactly their own candidates are settled: those notes are spent, and both drop out (which keeps the count small
 * however long the class's history grows; a class's flush epoch settles everything before it).
 *
 * Clients. An observer that is one of the service's clients knows its own routes (both ends): the set reported is the
 * smallest over taking any one client's routes away (the route's own client's other routes included), so one client
 * cannot fill a victim's set alone. A client is whoever created the route (its API key, else its address) or sent its
 * deposit (the sender's address, which the chain shows): routes that share either are one client (`clientIdentities`).
 * It counts the route itself: 1 means nobody else.
 */

import type { CountMethod } from '../domain/observations.ts';
import { exactOdds, type Fraction, nestedOdds, nests, type WorstOdds, ZERO } from './matchings.ts';

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
  /** The start (ms) of the first exit epoch the note may leave in (its gate opened in the epoch before); null while closed. */
  gatedAt: number | null;
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

/** The class's other withdrawals, in the order they left: before the route's, and after it. */
export interface ClassWithdrawals {
  before: readonly ClassWithdrawal[];
  after: readonly ClassWithdrawal[];
}

const UNKNOWN_CLIENT = '\u0000unknown';

/**
 * The candidates of `own` among `notes` in `state` worth at least `minValue` and, for a withdrawal in the exit epoch
 * starting at `exitEpochAt`, gated by then; each with its client numbered within the set (0 = own's client).
 */
export function anonymitySetMembers(
  own: PoolNoteFacts,
  notes: readonly PoolNoteFacts[],
  state: PoolStateView,
  minValue = 0n,
  exitEpochAt?: number,
): SetMember[] {
  if (own.amountClass === null) return [];
  const clients = new Map<string, number>([[own.client ?? UNKNOWN_CLIENT, 0]]);
  const members: SetMember[] = [];
  for (const note of notes) {
    if (note.routeId === own.routeId || note.amountClass !== own.amountClass || note.ragequit || note.value < minValue) continue;
    if (!state.inState(note.commitment) || !state.approved(note.label)) continue;
    if (exitEpochAt !== undefined && (note.gatedAt === null || note.gatedAt > exitEpochAt)) continue;
    const client = note.client ?? UNKNOWN_CLIENT;
    if (!clients.has(client)) clients.set(client, clients.size);
    members.push({ routeId: note.routeId, client: clients.get(client)! });
  }
  return members;
}

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
  /** The class's other withdrawals, in the order they left. */
  withdrawals?: ClassWithdrawals;
  /** Each route's client, as a pseudonym valid in the class; null or unknown routes: all one unknown client. */
  clientOf?: (routeId: string) => string | null | undefined;
  /** Routes whose notes never were anyone's to spend (ragequit). */
  excluded?: ReadonlySet<string>;
  /** The partner that vouched for each route's user (each user then a client of its own), if any. */
  voucherOf?: (routeId: string) => Voucher | null | undefined;
}

/**
 * A partner that vouches for its users (docs/privacy.md, "Users of one integrator"): its users are distinct clients,
 * but together they may fill at most `shareBps` of any route's set. A set is reported at most ⌊the set without the
 * partner's routes / (1 − share)⌋: whatever the partner lies about, a route's true set is at least that share short.
 */
export interface Voucher {
  /** The partner, as a pseudonym of the class. */
  tag: string;
  shareBps: number;
}

/** A set's size and how it was counted (the least exact way any of the counts in its minimum took). */
export interface SetCount {
  size: number;
  method: CountMethod;
}

const METHOD_ORDER: readonly CountMethod[] = ['nested', 'counted', 'too-tangled', 'contradictory'];

/**
 * The withdrawals that bear on `own` once every route in `without` is taken away (its note and its withdrawal), with
 * their candidates: the class's withdrawals in order, without the leading ones that are settled (they took exactly
 * their own candidates) and without those after the first point at or after the route's own where the withdrawals so
 * far could only have taken exactly the notes they name (later ones took other notes). Neither changes the odds.
 */
function openChain(input: SetInput, without: ReadonlySet<string>) {
  const { own } = input;
  const gone = (id: string) => id !== own && without.has(id);
  const before = (input.withdrawals?.before ?? []).filter((w) => !gone(w.routeId));
  const settled = settledPrefix(before, without);
  const open = (candidates: readonly string[]) => new Set(candidates.filter((id) => !gone(id) && !settled.notes.has(id)));
  const ours = open([own, ...input.candidates]);
  const withdrawals = [
    ...before.slice(settled.withdrawals),
    { routeId: own, candidates: [] },
    ...(input.withdrawals?.after ?? []).filter((w) => !gone(w.routeId)),
  ]
    .map((w) => ({ routeId: w.routeId, candidates: w.routeId === own ? ours : open(w.candidates) }))
    .filter((w) => w.candidates.size > 0);
  const at = withdrawals.findIndex((w) => w.routeId === own);
  const union = new Set<string>();
  for (let k = 0; k < withdrawals.length; k++) {
    for (const id of withdrawals[k]!.candidates) union.add(id);
    if (k >= at && union.size === k + 1) return { withdrawals: withdrawals.slice(0, k + 1), at, ours };
  }
  return { withdrawals, at, ours };
}

/** The set of `own` with every route in `without` taken away. `nested`: the whole chain's candidate sets nest (so any part's do). */
function setWithout(input: SetInput, without: ReadonlySet<string>, nested: boolean): SetCount {
  const { withdrawals, at, ours } = openChain(input, without);
  const chain = withdrawals.map((w) => w.candidates);
  let odds: WorstOdds | null | 'too-large';
  let method: CountMethod;
  if (nested || nests(chain)) {
    odds = nestedOdds(chain, at, input.own);
    method = 'nested';
  } else {
    odds = exactOdds(chain, at, input.own);
    method = 'counted';
  }
  if (odds === 'too-large') return { size: 1, method: 'too-tangled' };
  if (odds === null) return { size: 1, method: 'contradictory' };
  return { size: sizeOf(odds.worst, ours.size), method };
}

/** ⌊1 / worst⌋, at least 1; `fallback` when nothing could be the route's (no chance at all). */
function sizeOf(worst: Fraction, fallback: number): number {
  if (worst.n === ZERO.n) return fallback;
  return Math.max(1, Number(worst.d / worst.n));
}

/** The candidates that leading withdrawals have not certainly spent: what a withdrawal records (its record stays small). */
export function unsettledMembers(members: readonly SetMember[], withdrawals: ClassWithdrawals): SetMember[] {
  const { notes } = settledPrefix(withdrawals.before, new Set());
  return members.filter((m) => !notes.has(m.routeId));
}

/** The leading withdrawals (in the order they left) that are settled, and the notes they certainly spent. */
export function settled(withdrawals: readonly ClassWithdrawal[]): { withdrawals: number; notes: Set<string> } {
  return settledPrefix(withdrawals, new Set());
}

/**
 * The anonymity set of a route (module comment): the smallest over taking away nobody, or any one client's routes
 * (notes and withdrawals; the route's own client's other routes too), with how it was counted.
 */
export function countAnonymitySet(input: SetInput): SetCount {
  const excluded = input.excluded ?? new Set<string>();
  // Only the routes of the withdrawals that bear on the route, and their candidates: taking any other route away
  // changes nothing (a settled withdrawal stays settled without any one client, its notes being its own routes').
  const bearing = openChain(input, excluded).withdrawals;
  const routes = new Set(bearing.flatMap((w) => [w.routeId, ...w.candidates]));
  routes.delete(input.own);
  const clientOf = (id: string) => input.clientOf?.(id) ?? UNKNOWN_CLIENT;
  const byClient = new Map<string, string[]>();
  for (const id of routes) {
    const theirs = byClient.get(clientOf(id));
    if (theirs) theirs.push(id);
    else byClient.set(clientOf(id), [id]);
  }
  const whole = [
    ...(input.withdrawals?.before ?? []).map((w) => new Set(w.candidates)),
    new Set([input.own, ...input.candidates]),
    ...(input.withdrawals?.after ?? []).map((w) => new Set(w.candidates)),
  ];
  const nested = nests(whole);
  const counts = [setWithout(input, excluded, nested)];
  for (const theirs of byClient.values()) counts.push(setWithout(input, new Set([...excluded, ...theirs]), nested));
  // Each vouching partner's users may fill at most its share of the set.
  const byVoucher = new Map<string, { shareBps: number; routes: string[] }>();
  for (const id of routes) {
    const voucher = input.voucherOf?.(id);
    if (!voucher) continue;
    const entry = byVoucher.get(voucher.tag) ?? { shareBps: voucher.shareBps, routes: [] };
    entry.routes.push(id);
    byVoucher.set(voucher.tag, entry);
  }
  for (const { shareBps, routes: theirs } of byVoucher.values()) {
    if (shareBps >= 10_000) continue;
    const without = setWithout(input, new Set([...excluded, ...theirs]), nested);
    counts.push({ ...without, size: Math.max(1, Math.floor((without.size * 10_000) / (10_000 - shareBps))) });
  }
  return {
    size: Math.min(...counts.map((c) => c.size)),
    method: counts.reduce<CountMethod>((worst, c) => (METHOD_ORDER.indexOf(c.method) > METHOD_ORDER.indexOf(worst) ? c.method : worst), 'nested'),
  };
}

/** The anonymity set of a route: `countAnonymitySet`'s size. */
export function anonymitySetSize(input: SetInput): number {
  return countAnonymitySet(input).size;
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
