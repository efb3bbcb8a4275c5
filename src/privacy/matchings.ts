/**
 * The observer's exact odds over matchings (docs/privacy.md, "The anonymity set"): every withdrawal of a class spent
 * one of its candidate notes, no note was spent twice, and every such matching is equally likely (the exit lottery
 * makes them so: src/privacy/exitLottery.ts). Two ways to count the same odds:
 * - `nestedOdds`, a closed form, exact when the candidate sets nest in withdrawal order (each withdrawal could spend
 *   every note an earlier one that shares a candidate with it could), which gates that open in time order give;
 * - `exactOdds`, counting matchings over the subsets of the notes involved, exact for any candidate sets but only
 *   for a component of at most MAX_EXACT_NOTES notes.
 * Pure: the anonymity set (src/privacy/anonymitySet.ts) chooses between them.
 */

/** A probability as an exact fraction. */
export interface Fraction {
  n: bigint;
  d: bigint;
}

export const ZERO: Fraction = { n: 0n, d: 1n };

/** The larger of two fractions. */
export const larger = (a: Fraction, b: Fraction) => (a.n * b.d >= b.n * a.d ? a : b);

/** The notes of the largest component `exactOdds` counts (2^n subsets per withdrawal; matchings stay below 2^53). */
export const MAX_EXACT_NOTES = 16;

/** The largest chance, either way, that the observer names: which note withdrawal `at` spent, and which withdrawal spent `note`. */
export interface WorstOdds {
  worst: Fraction;
}

/**
 * Whether the candidate sets nest in this order: any two that share a note, the earlier is within the later. Then
 * the withdrawal at place i had exactly f_i = |candidates_i| − (earlier ones sharing a note with it) notes to choose
 * from, whatever the earlier ones chose, and `nestedOdds` is exact.
 */
export function nests(chain: ReadonlyArray<ReadonlySet<string>>): boolean {
  for (let i = 0; i < chain.length; i++) {
    for (let k = 0; k < i; k++) {
      const earlier = chain[k]!;
      let shares = false;
      let within = true;
      for (const id of earlier) {
        if (chain[i]!.has(id)) shares = true;
        else within = false;
      }
      if (shares && !within) return false;
    }
  }
  return true;
}

/**
 * The closed form for nested candidate sets: P(withdrawal j spent D) = Π_{i < j, D a candidate of i} (1 − 1/f_i) × 1/f_j.
 * Null when the sets contradict themselves (some f_i ≤ 0: more withdrawals than notes they could have spent).
 */
export function nestedOdds(chain: ReadonlyArray<ReadonlySet<string>>, at: number, note: string): WorstOdds | null {
  const left = notesLeft(chain);
  if (left.some((f) => f <= 0)) return null;
  // Where each note is a candidate, in chain order.
  const holders = new Map<string, number[]>();
  chain.forEach((candidates, i) => {
    for (const id of candidates) {
      const list = holders.get(id);
      if (list) list.push(i);
      else holders.set(id, [i]);
    }
  });
  const terms = (id: string, j: number) => holders.get(id)!.filter((i) => i < j);
  // Every chance the worst is taken from, in floating point first; exactly only for those within rounding of the largest.
  const pairs: Array<[string, number]> = [
    ...[...chain[at]!].map((id): [string, number] => [id, at]),
    ...(holders.get(note) ?? []).map((j): [string, number] => [note, j]),
  ];
  const approximate = pairs.map(([id, j]) => terms(id, j).reduce((p, i) => p * (1 - 1 / left[i]!), 1 / left[j]!));
  const largest = Math.max(...approximate);
  let worst = ZERO;
  pairs.forEach(([id, j], k) => {
    if (approximate[k]! < largest * (1 - 1e-9)) return;
    let p: Fraction = { n: 1n, d: BigInt(left[j]!) };
    for (const i of terms(id, j)) p = { n: p.n * BigInt(left[i]! - 1), d: p.d * BigInt(left[i]!) };
    worst = larger(worst, p);
  });
  return { worst };
}

/**
 * f_i for nested sets: |candidates_i| less the earlier withdrawals that share a candidate with it. Those are exactly
 * the earlier withdrawals in the groups (joined through shared candidates) that withdrawal i touches, so a union-find
 * over withdrawals counts them in one pass.
 */
function notesLeft(chain: ReadonlyArray<ReadonlySet<string>>): number[] {
  const parent: number[] = [];
  const members: number[] = [];
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  const lastHolder = new Map<string, number>();
  return chain.map((candidates, i) => {
    parent[i] = i;
    members[i] = 1;
    const touched = new Set<number>();
    for (const id of candidates) {
      const holder = lastHolder.get(id);
      if (holder !== undefined) touched.add(find(holder));
    }
    let earlier = 0;
    for (const root of touched) {
      earlier += members[root]!;
      members[i]! += members[root]!;
      parent[root] = i;
    }
    for (const id of candidates) lastHolder.set(id, i);
    return candidates.size - earlier;
  });
}

/**
 * The same odds for any candidate sets, counted: over the withdrawals connected to withdrawal `at` (through shared
 * candidates), the number of matchings in which `at` spent each of its candidates and in which each withdrawal spent
 * `note`, against all matchings. 'too-large' when that component has more than `limit` notes; null when it has no
 * matching at all (the records contradict themselves).
 */
export function exactOdds(chain: ReadonlyArray<ReadonlySet<string>>, at: number, note: string, limit = MAX_EXACT_NOTES): WorstOdds | null | 'too-large' {
  const members = componentOf(chain, at);
  const withdrawals = members.map((i) => chain[i]!);
  const notes = [...new Set(withdrawals.flatMap((c) => [...c]))];
  if (notes.length > limit) return 'too-large';
  const index = new Map(notes.map((id, i) => [id, i]));
  const masks = withdrawals.map((c) => [...c].reduce((m, id) => m | (1 << index.get(id)!), 0));
  const counts = countMatchings(masks, notes.length);
  if (counts.total === 0) return null;
  const own = members.indexOf(at);
  const noteBit = index.get(note);
  let most = 0;
  for (const ways of counts.byPair[own]!) most = Math.max(most, ways);
  if (noteBit !== undefined) for (const row of counts.byPair) most = Math.max(most, row[noteBit]!);
  return { worst: { n: BigInt(most), d: BigInt(counts.total) } };
}

/** The withdrawals (indices) connected to withdrawal `at` through shared candidates, in chain order. */
function componentOf(chain: ReadonlyArray<ReadonlySet<string>>, at: number): number[] {
  const reached = new Set([at]);
  const notes = new Set(chain[at]);
  for (let grew = true; grew; ) {
    grew = false;
    chain.forEach((candidates, i) => {
      if (reached.has(i) || ![...candidates].some((id) => notes.has(id))) return;
      reached.add(i);
      for (const id of candidates) notes.add(id);
      grew = true;
    });
  }
  return [...reached].sort((a, b) => a - b);
}

/**
 * Matchings of withdrawals (candidate bit masks over m notes) to distinct notes: how many in all, and byPair[i][j]
 * how many give withdrawal i note j. Forward: ways to give withdrawals 0..i−1 exactly the notes of a subset; backward:
 * ways to give withdrawals i..n−1 notes outside a subset. Counts are whole numbers below 2^53 (at most 16! matchings),
 * so doubles hold them exactly.
 */
function countMatchings(masks: number[], m: number): { total: number; byPair: number[][] } {
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
  const byPair = Array.from({ length: n }, () => new Array<number>(m).fill(0));
  for (let i = 0; i < n; i++) {
    const before = forward[i]!;
    const after = backward[i + 1]!;
    for (let s = 0; s < size; s++) {
      const ways = before[s]!;
      if (ways === 0) continue;
      for (let free = masks[i]! & ~s; free; free &= free - 1) {
        const bit = free & -free;
        const j = 31 - Math.clz32(bit);
        byPair[i]![j] = byPair[i]![j]! + ways * after[s | bit]!;
      }
    }
  }
  return { total: backward[0]![0]!, byPair };
}
