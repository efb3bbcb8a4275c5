/**
 * Scoring: the attacker's guesses (attacks.ts) against the harness's ground truth (harness.ts). Only this
 * file and the harness know which public item belongs to which route.
 */
import type { Item, Link } from './attacks.ts';

export interface RouteTruth {
  routeId: string;
  group: 'shared' | 'distinct';
  /** Human amount as requested. */
  amount: string;
  status: string;
  /** Source side: the route's deposit address (the id of its SourceDeposit). */
  depositAddress: string;
  /** The bridge-in fill on the hub (positive control of the identifier attack). */
  fillTx: string | null;
  /** Pool deposit and withdrawal transactions (ids of PoolDeposit / PoolWithdrawal). */
  shieldTx: string | null;
  unshieldTx: string | null;
  /** Destination payout transaction (id of its Payout). */
  payoutTx: string | null;
  /** From GET (the harness created the route). */
  anonymitySet: number | null;
  waitedSeconds: number | null;
}

export interface LinkScore {
  links: number;
  correct: number;
  details: Array<Link & { correct: boolean }>;
}

/** Correct when the linked deposit and withdrawal belong to the same route. */
export function scoreLinks(links: Link[], truth: Map<string, string>): LinkScore {
  const details = links.map((l) => ({ ...l, correct: truth.get(l.deposit) === l.withdrawal }));
  return { links: links.length, correct: details.filter((d) => d.correct).length, details };
}

export interface GroupScore {
  size: number;
  correct: number;
  /** Expected correct links of a uniformly random matching inside the group: size × 1/size = 1 (0 when empty). */
  chance: number;
}

/** How many of `routes`' deposits the matching sent to their own withdrawal. */
export function scoreGroup(
  routes: RouteTruth[],
  guess: Map<string, string>,
  depositOf: (r: RouteTruth) => string | null,
  withdrawalOf: (r: RouteTruth) => string | null,
): GroupScore {
  const correct = routes.filter((r) => {
    const d = depositOf(r);
    const w = withdrawalOf(r);
    return d !== null && w !== null && guess.get(d) === w;
  }).length;
  return { size: routes.length, correct, chance: routes.length > 0 ? 1 : 0 };
}

export interface OrderScore {
  /** For each route in entry order: its exit position (1-based). */
  exitPositions: number[];
  inversions: number;
  pairs: number;
  /** Kendall's tau between entry and exit order: 1 = FIFO, -1 = reversed, ~0 = unrelated. */
  kendallTau: number;
}

/** Entry order (pool deposits) vs exit order (pool withdrawals) of the routes. */
export function orderScore(routes: RouteTruth[], deposits: Map<string, Item>, withdrawals: Map<string, Item>): OrderScore {
  const placed = routes
    .map((r) => ({ entry: deposits.get(r.shieldTx ?? '')?.order, exit: withdrawals.get(r.unshieldTx ?? '')?.order }))
    .filter((p): p is { entry: number; exit: number } => p.entry !== undefined && p.exit !== undefined)
    .sort((a, b) => a.entry - b.entry);
  const exitRank = new Map([...placed].sort((a, b) => a.exit - b.exit).map((p, i) => [p.exit, i + 1]));
  const exitPositions = placed.map((p) => exitRank.get(p.exit)!);
  let inversions = 0;
  for (let i = 0; i < exitPositions.length; i++) for (let j = i + 1; j < exitPositions.length; j++) if (exitPositions[i]! > exitPositions[j]!) inversions++;
  const pairs = (exitPositions.length * (exitPositions.length - 1)) / 2;
  return { exitPositions, inversions, pairs, kendallTau: pairs > 0 ? 1 - (2 * inversions) / pairs : 0 };
}

/**
 * The anonymity set a route really had against an observer who reads its withdrawal proof: its own deposit
 * plus the later deposits of the same value that were already in the tree at the proof's state root (a
 * deposit inserted after that root cannot be the spent note). GET's anonymitySet counts every same-bucket
 * deposit until the withdrawal was mined.
 */
export function rootBoundedSet(
  route: RouteTruth,
  deposits: Map<string, Item & { leafIndex: number | null }>,
  withdrawals: Map<string, Item & { proofLeaves: number | null }>,
): number | null {
  const own = deposits.get(route.shieldTx ?? '');
  const exit = withdrawals.get(route.unshieldTx ?? '');
  if (!own || !exit || exit.proofLeaves === null) return null;
  const limit = exit.proofLeaves;
  return 1 + [...deposits.values()].filter((d) => d.value === own.value && d.order > own.order && d.leafIndex !== null && d.leafIndex <= limit).length;
}
