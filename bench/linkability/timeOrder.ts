/**
 * The time-order attacks of issue 32 (point 5): what the order and the moments of a class's deposits and withdrawals
 * tell an observer that holds only public data (attacks.ts: the bridges traced, the classes by quote inversion, the
 * candidates of each withdrawal by state root, ASP root, ragequit and the gate's published timing). Each attack names,
 * for every withdrawal of a class, the pool deposit it guesses the withdrawal spent (withdrawal id → entry id); the
 * bridges turn that into a payout ↔ source deposit guess, which score.ts-style code in users.ts checks end to end.
 * The attacker's own routes (entry → exit, both ends known) are set aside from every list.
 */
import type { Candidates, Entry, Exit } from './attacks.ts';
import type { Posterior } from './posterior.ts';

/** What every time-order attack starts from (all public, or the attacker's own). */
export interface TimeOrderInput {
  entries: Entry[];
  exits: Exit[];
  /** Entry → the classes its source deposit's exact value quotes (null: untraced, any class). */
  classes: Map<string, Set<string> | null>;
  /** Withdrawal → its candidates after the gate's published timing (attacks.ts gateTimingCandidates). */
  candidates: Map<string, Candidates>;
  /** Label → the block time (s) of the first RootUpdated that approved it. */
  approvedAt: Map<bigint, number>;
  rules: { exitEpochSeconds: number; minPeerAgeSeconds: number };
  /** The attacker's own routes: entry → exit. */
  own: Map<string, string>;
}

/** One attack's guesses, and what it considered per withdrawal (for its misses and its uniform baseline). */
export interface TimeOrderGuess {
  /** Withdrawal id → the entry (pool deposit) id it names. */
  guess: Map<string, string>;
  /** Withdrawal id → the entries it chose among (absent: the attack matched by position alone). */
  considered: Map<string, string[]>;
  /** Withdrawals for which the attack's own rule left nothing and it fell back to every public candidate (waiter). */
  fallbacks: number;
}

/** The classes the withdrawals show (their payout's class), each with its withdrawals and entries, the attacker's own set aside. */
function byClass(input: TimeOrderInput): Array<{ key: string; exits: Exit[]; entries: Entry[] }> {
  const ownExits = new Set(input.own.values());
  const keys = [...new Set(input.exits.flatMap((x) => (x.classKey !== null ? [x.classKey] : [])))];
  return keys.map((key) => ({
    key,
    exits: input.exits.filter((x) => x.classKey === key && !ownExits.has(x.id)),
    entries: input.entries.filter((e) => !input.own.has(e.id) && (input.classes.get(e.id)?.has(key) ?? false)),
  }));
}

/**
 * (a) First in, first out: the i-th withdrawal of a class (by `exitOrder`) spent the i-th deposit of its class (by
 * `entryOrder`). `pool`: pool withdrawals against pool deposits; `end`: payouts (destination order) against source
 * deposits (source order), the bridges tying both to the pool.
 */
export function fifoGuess(input: TimeOrderInput, side: 'pool' | 'end'): TimeOrderGuess {
  const guess = new Map<string, string>();
  for (const c of byClass(input)) {
    const exits = [...c.exits].sort((a, b) =>
      side === 'pool' ? a.withdrawal.order - b.withdrawal.order : (a.payout?.order ?? Number.MAX_SAFE_INTEGER) - (b.payout?.order ?? Number.MAX_SAFE_INTEGER),
    );
    const entries = [...c.entries].sort((a, b) =>
      side === 'pool' ? a.deposit.order - b.deposit.order : (a.source?.order ?? Number.MAX_SAFE_INTEGER) - (b.source?.order ?? Number.MAX_SAFE_INTEGER),
    );
    exits.forEach((x, i) => {
      const e = entries[i];
      if (e) guess.set(x.id, e.id);
    });
  }
  return { guess, considered: new Map(), fallbacks: 0 };
}

/**
 * (b) Nearest rank: withdrawals of a class in mined order; the i-th takes, among its public candidates not taken yet,
 * the deposit whose rank among the class's deposits is nearest i (ties: the earlier). Unlike FIFO it never names a
 * deposit its withdrawal could not have spent (not approved yet, outside its roots) nor one taken already.
 */
export function nearestRankGuess(input: TimeOrderInput): TimeOrderGuess {
  const guess = new Map<string, string>();
  const considered = new Map<string, string[]>();
  for (const c of byClass(input)) {
    const rank = new Map([...c.entries].sort((a, b) => a.deposit.order - b.deposit.order).map((e, i) => [e.id, i]));
    const used = new Set<string>();
    [...c.exits]
      .sort((a, b) => a.withdrawal.order - b.withdrawal.order)
      .forEach((x, i) => {
        const open = (input.candidates.get(x.id)?.ids ?? []).filter((id) => rank.has(id) && !used.has(id));
        considered.set(x.id, open);
        const pick = open.sort((a, b) => Math.abs(rank.get(a)! - i) - Math.abs(rank.get(b)! - i) || rank.get(a)! - rank.get(b)!)[0];
        if (!pick) return;
        used.add(pick);
        guess.set(x.id, pick);
      });
  }
  return { guess, considered, fallbacks: 0 };
}

/**
 * (c) The waiter attack, the old rule's reasoning: a note leaves in the first exit epoch it may (after its approval
 * and its minimum age), so a note that could have left in an epoch in which its class withdrew, and stayed, is a
 * waiter (it asked for a larger set) and is no candidate of later withdrawals. Withdrawals in mined order; each takes
 * the earliest deposit among its public candidates not taken yet that had no such earlier epoch; when none is left,
 * it falls back to the earliest of all its public candidates not taken yet (counted in `fallbacks`). Under the exit
 * lottery a gated note stays through many epochs in which its class withdrew, so this rule excludes the true note
 * more often than not: kept to show it.
 */
export function waiterGuess(input: TimeOrderInput): TimeOrderGuess {
  const E = input.rules.exitEpochSeconds;
  const epochOf = (t: number) => Math.floor(t / E) * E;
  const entryById = new Map(input.entries.map((e) => [e.id, e]));
  /** The first epoch start the note may leave in: after its public approval, and aged. */
  const firstChance = (e: Entry) => {
    const approval = e.deposit.label !== null ? (input.approvedAt.get(e.deposit.label) ?? e.deposit.timestamp) : e.deposit.timestamp;
    return Math.max(epochOf(approval) + E, Math.ceil((e.deposit.timestamp + input.rules.minPeerAgeSeconds) / E) * E);
  };
  const guess = new Map<string, string>();
  const considered = new Map<string, string[]>();
  let fallbacks = 0;
  for (const c of byClass(input)) {
    // Every epoch the class withdrew in (the attacker's own withdrawals included: they are public too).
    const classEpochs = [...new Set(input.exits.filter((x) => x.classKey === c.key).map((x) => epochOf(x.withdrawal.timestamp)))].sort((a, b) => a - b);
    const used = new Set<string>();
    const members = new Set(c.entries.map((e) => e.id));
    for (const x of [...c.exits].sort((a, b) => a.withdrawal.order - b.withdrawal.order)) {
      const epoch = epochOf(x.withdrawal.timestamp);
      const open = (input.candidates.get(x.id)?.ids ?? []).filter((id) => members.has(id) && !used.has(id));
      const fresh = open.filter((id) => {
        const from = firstChance(entryById.get(id)!);
        return !classEpochs.some((e) => e >= from && e < epoch);
      });
      const pool = fresh.length > 0 ? fresh : open;
      if (fresh.length === 0 && open.length > 0) fallbacks++;
      considered.set(x.id, fresh);
      const pick = pool.sort((a, b) => entryById.get(a)!.deposit.order - entryById.get(b)!.deposit.order)[0];
      if (!pick) continue;
      used.add(pick);
      guess.set(x.id, pick);
    }
  }
  return { guess, considered, fallbacks };
}

/**
 * (d) The likelihood attacker: every matching of withdrawals to their public candidates (approved and aged before the
 * epoch the withdrawal was mined in) equally likely, the exact posterior (posterior.ts); each withdrawal's guess is
 * its most likely deposit (ties: the earlier deposit).
 */
export function likelihoodGuess(input: TimeOrderInput, posterior: Posterior): TimeOrderGuess {
  const order = new Map(input.entries.map((e) => [e.id, e.deposit.order]));
  const guess = new Map<string, string>();
  const considered = new Map<string, string[]>();
  const ownExits = new Set(input.own.values());
  for (const x of input.exits) {
    if (ownExits.has(x.id)) continue;
    const row = posterior.byWithdrawal.get(x.id);
    if (!row) continue;
    considered.set(x.id, [...row.keys()]);
    const best = [...row].sort((a, b) => b[1] - a[1] || (order.get(a[0]) ?? 0) - (order.get(b[0]) ?? 0))[0];
    if (best) guess.set(x.id, best[0]);
  }
  return { guess, considered, fallbacks: 0 };
}
