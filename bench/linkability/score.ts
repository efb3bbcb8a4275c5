/**
 * Scoring: the attacker's guesses (attacks.ts) against the harness's ground truth (harness.ts). Only this
 * file and the harness know which public item belongs to which route.
 */
import type { Item, Link } from './attacks.ts';

export interface RouteTruth {
  routeId: string;
  /** 'shared' (one input), 'class' (distinct inputs, one class), 'distinct' (each its own class), 'cross' (USDC → WETH),
   * 'hub' (paid on the hub), 'sybil' (the attacker's own client); the harness's plan. */
  group: string;
  /** Human amount as requested. */
  amount: string;
  /** The client it was created from (X-Forwarded-For). */
  client: string;
  /** Created by the attacker's own client: the attacker knows both of its ends. */
  attackerOwn: boolean;
  /** The harness had the ASP reject its deposit. */
  rejected: boolean;
  status: string;
  needsAttention: boolean;
  /** Source side: the route's deposit address (the id of its SourceDeposit). */
  depositAddress: string;
  /** The bridge-in fill on the hub (positive control of the identifier attack). */
  fillTx: string | null;
  /** Pool deposit and withdrawal transactions (ids of PoolDeposit / PoolWithdrawal, of Entry / Exit). */
  shieldTx: string | null;
  unshieldTx: string | null;
  /** The payout transaction (id of its Payout: on the destination, or the withdrawal itself when paid on the hub). */
  payoutTx: string | null;
  /** From GET (the harness created the route). */
  anonymitySet: number | null;
  leftAtMaxWait: boolean | null;
  waitedSeconds: number | null;
  /** GET amountClass.value (null: a service without classes). */
  classValue: string | null;
  /** When it was created and when its deposit was sent (ms epoch). */
  createdAt: number;
  fundedAt: number | null;
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

/** How many of `routes`' deposits the matching sent to their own withdrawal (chance: 1 for a group of look-alikes). */
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
  return orderOf(placed);
}

/** Kendall's tau of entry order against exit order (each a position on its own chain, distinct within a side). */
export function orderOf(pairs: ReadonlyArray<{ entry: number; exit: number }>): OrderScore {
  const placed = [...pairs].sort((a, b) => a.entry - b.entry);
  const exitRank = new Map([...placed].sort((a, b) => a.exit - b.exit).map((p, i) => [p.exit, i + 1]));
  const exitPositions = placed.map((p) => exitRank.get(p.exit)!);
  let inversions = 0;
  for (let i = 0; i < exitPositions.length; i++) for (let j = i + 1; j < exitPositions.length; j++) if (exitPositions[i]! > exitPositions[j]!) inversions++;
  const pairCount = (exitPositions.length * (exitPositions.length - 1)) / 2;
  return { exitPositions, inversions, pairs: pairCount, kendallTau: pairCount > 0 ? 1 - (2 * inversions) / pairCount : 0 };
}

export interface RouteSet {
  /** The attacker's effective set (posterior.ts effectiveSet); null when its withdrawal was not solved. */
  effective: number | null;
  /** GET reported more than the attacker leaves. */
  overstated: boolean;
  /** The route's own deposit is not among its withdrawal's candidates: the attacker's rules excluded the truth. */
  miss: boolean;
}

/** Per route: the attacker's effective set beside GET's. */
export function routeSet(
  route: RouteTruth,
  effective: (withdrawal: string, deposit: string | null) => number | null,
  candidates: Map<string, { ids: string[] }>,
): RouteSet | null {
  if (!route.unshieldTx) return null;
  const set = effective(route.unshieldTx, route.shieldTx);
  const miss = !!route.shieldTx && !(candidates.get(route.unshieldTx)?.ids ?? []).includes(route.shieldTx);
  return { effective: set, overstated: route.anonymitySet !== null && set !== null && route.anonymitySet > set, miss };
}

/** How many tracing links (entry → source deposit, exit → payout) name the route's own. */
export function scoreTracing(
  routes: RouteTruth[],
  traced: Map<string, string | null>,
  key: (r: RouteTruth) => string | null,
  truth: (r: RouteTruth) => string | null,
) {
  const placed = routes.filter((r) => key(r) !== null && truth(r) !== null);
  return { routes: placed.length, correct: placed.filter((r) => traced.get(key(r)!) === truth(r)).length };
}
