/**
 * The attacker's exact posterior (written for the bench, independently of the service's src/privacy/anonymitySet.ts):
 * every withdrawal spent one of its candidate deposits (attacks.ts withdrawalCandidates), no deposit was spent twice,
 * and every such matching of withdrawals to deposits is taken as equally likely. Then
 *   P(withdrawal w spent deposit d) = #matchings with w → d / #matchings,
 * counted exactly per connected component of the candidate graph (withdrawals and deposits that share no candidate
 * are independent). Pairs the attacker knows (its own routes) are fixed first: their withdrawal and deposit leave the
 * graph. Counting is a dynamic programme over the subsets of a component's deposits, forwards and backwards, so a
 * component of up to MAX_DEPOSITS deposits is exact; a larger one is reported and left out.
 * Before counting, every candidate pair that no matching can use is dropped (admissiblePairs: e.g. the notes of an
 * earlier round that the round's own withdrawals must have spent are nobody else's), which changes no probability and
 * splits a class's long history into components small enough to count.
 */

/** Deposits of one component at most (2^n subsets are counted). */
export const MAX_DEPOSITS = 18;

export interface Posterior {
  /** withdrawal → deposit → probability (only pairs with a non-zero probability). */
  byWithdrawal: Map<string, Map<string, number>>;
  /** deposit → withdrawal → probability. */
  byDeposit: Map<string, Map<string, number>>;
  /** Withdrawals of components too large to count, or with no matching at all (an inconsistent candidate graph). */
  unsolved: string[];
}

/** `candidates`: withdrawal → deposits it may have spent. `known`: withdrawal → deposit pairs the attacker knows. */
export function matchingPosterior(candidates: Map<string, string[]>, known: Map<string, string> = new Map()): Posterior {
  const knownDeposits = new Set(known.values());
  const graph = new Map<string, string[]>();
  for (const [w, ds] of candidates) {
    if (known.has(w)) continue;
    graph.set(
      w,
      [...new Set(ds)].filter((d) => !knownDeposits.has(d)),
    );
  }
  const byWithdrawal = new Map<string, Map<string, number>>();
  const byDeposit = new Map<string, Map<string, number>>();
  const unsolved: string[] = [];
  for (const [w, d] of known) {
    byWithdrawal.set(w, new Map([[d, 1]]));
    byDeposit.set(d, new Map([[w, 1]]));
  }
  const note = (w: string, d: string, p: number) => {
    if (p <= 0) return;
    byWithdrawal.set(w, (byWithdrawal.get(w) ?? new Map()).set(d, p));
    byDeposit.set(d, (byDeposit.get(d) ?? new Map()).set(w, p));
  };

  const pruned = admissiblePairs(graph);
  for (const component of components(pruned)) {
    const deposits = [...new Set(component.flatMap((w) => pruned.get(w)!))];
    if (deposits.length > MAX_DEPOSITS || component.length > deposits.length) {
      unsolved.push(...component);
      continue;
    }
    const index = new Map(deposits.map((d, i) => [d, i]));
    const masks = component.map((w) => pruned.get(w)!.reduce((m, d) => m | (1 << index.get(d)!), 0));
    const solved = solve(masks, deposits.length);
    if (!solved) {
      unsolved.push(...component);
      continue;
    }
    for (const [i, w] of component.entries()) for (const [j, d] of deposits.entries()) note(w, d, solved[i]![j]!);
  }
  return { byWithdrawal, byDeposit, unsolved };
}

/**
 * The candidate pairs some matching uses (every withdrawal spent a deposit of its own, no deposit twice): a pair that no
 * such matching contains has probability 0 and is dropped. Per connected component, from one maximum matching
 * (augmenting paths): a pair outside it is usable when, with the withdrawal forced onto that deposit, the deposit's
 * former spender finds another (an augmenting path that avoids the forced deposit). A component where no matching
 * spends for every withdrawal contradicts itself and is left as it is (the count reports it).
 */
export function admissiblePairs(graph: Map<string, string[]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const component of components(graph)) {
    const spentBy = new Map<string, string>();
    const spends = new Map<string, string>();
    // Kuhn's augmenting path from w, through deposits not in `seen` (those tried already, or held in place).
    const augment = (w: string, seen: Set<string>): boolean => {
      for (const d of graph.get(w)!) {
        if (seen.has(d)) continue;
        seen.add(d);
        const other = spentBy.get(d);
        if (other === undefined || augment(other, seen)) {
          spentBy.set(d, w);
          spends.set(w, d);
          return true;
        }
      }
      return false;
    };
    for (const w of component) augment(w, new Set());
    if (spends.size < component.length) {
      for (const w of component) out.set(w, graph.get(w)!);
      continue;
    }
    const matched = { spentBy: new Map(spentBy), spends: new Map(spends) };
    const restore = () => {
      spentBy.clear();
      for (const [k, v] of matched.spentBy) spentBy.set(k, v);
      spends.clear();
      for (const [k, v] of matched.spends) spends.set(k, v);
    };
    for (const w of component) {
      out.set(
        w,
        graph.get(w)!.filter((d) => {
          const other = matched.spentBy.get(d);
          if (other === undefined || other === w) return true;
          // Force w → d: w's own deposit is freed, and `other` must find another deposit without taking d back.
          spentBy.delete(matched.spends.get(w)!);
          spentBy.set(d, w);
          spends.set(w, d);
          spends.delete(other);
          const usable = augment(other, new Set([d]));
          restore();
          return usable;
        }),
      );
    }
  }
  return out;
}

/** Connected components of the withdrawal–deposit graph, as lists of withdrawals. */
function components(graph: Map<string, string[]>): string[][] {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let root = x;
    while (parent.get(root) !== root) root = parent.get(root)!;
    parent.set(x, root);
    return root;
  };
  const union = (a: string, b: string) => parent.set(find(a), find(b));
  for (const [w, ds] of graph) {
    parent.set(`w:${w}`, parent.get(`w:${w}`) ?? `w:${w}`);
    for (const d of ds) {
      if (!parent.has(`d:${d}`)) parent.set(`d:${d}`, `d:${d}`);
      union(`w:${w}`, `d:${d}`);
    }
  }
  const groups = new Map<string, string[]>();
  for (const w of graph.keys()) {
    const root = find(`w:${w}`);
    groups.set(root, [...(groups.get(root) ?? []), w]);
  }
  return [...groups.values()];
}

const popcount = (x: number) => {
  let n = 0;
  for (let v = x; v; v &= v - 1) n++;
  return n;
};

/**
 * P[i][j] = P(withdrawal i spent deposit j) over the uniform matchings of withdrawals (candidate masks) to distinct
 * deposits; null when there is no matching. forward[i][S]: ways to give withdrawals 0..i−1 exactly the deposits S;
 * backward[i][S]: ways to give withdrawals i..n−1 deposits outside S.
 */
function solve(masks: number[], m: number): number[][] | null {
  const n = masks.length;
  const size = 1 << m;
  const forward = Array.from({ length: n + 1 }, () => new Float64Array(size));
  forward[0]![0] = 1;
  for (let i = 0; i < n; i++) {
    const from = forward[i]!;
    const to = forward[i + 1]!;
    for (let s = 0; s < size; s++) {
      const ways = from[s]!;
      if (ways === 0) continue;
      for (let free = masks[i]! & ~s; free; free &= free - 1) {
        const bit = free & -free;
        to[s | bit] = to[s | bit]! + ways;
      }
    }
  }
  const backward = Array.from({ length: n + 1 }, () => new Float64Array(size));
  backward[n]!.fill(1);
  for (let i = n - 1; i >= 0; i--) {
    const next = backward[i + 1]!;
    const here = backward[i]!;
    for (let s = 0; s < size; s++) {
      let ways = 0;
      for (let free = masks[i]! & ~s; free; free &= free - 1) ways += next[s | (free & -free)]!;
      here[s] = ways;
    }
  }
  const total = backward[0]![0]!;
  if (total === 0) return null;
  const p = Array.from({ length: n }, () => new Array<number>(m).fill(0));
  for (let i = 0; i < n; i++) {
    const before = forward[i]!;
    const after = backward[i + 1]!;
    for (let s = 0; s < size; s++) {
      const ways = before[s]!;
      if (ways === 0 || popcount(s) !== i) continue;
      for (let free = masks[i]! & ~s; free; free &= free - 1) {
        const bit = free & -free;
        const j = 31 - Math.clz32(bit);
        p[i]![j] = p[i]![j]! + (ways * after[s | bit]!) / total;
      }
    }
  }
  return p;
}

/**
 * The effective anonymity set of one route against this posterior: ⌊1 / the largest probability⌋ over both
 * directions (which deposit its withdrawal spent; which withdrawal spent its deposit). null when the route's
 * withdrawal is not in the posterior.
 */
export function effectiveSet(posterior: Posterior, withdrawal: string, deposit: string | null): number | null {
  const row = posterior.byWithdrawal.get(withdrawal);
  if (!row) return null;
  let largest = Math.max(0, ...row.values());
  if (deposit) largest = Math.max(largest, ...(posterior.byDeposit.get(deposit)?.values() ?? []));
  return largest > 0 ? Math.max(1, Math.floor(1 / largest + 1e-9)) : null;
}
