/**
 * What the watchers tell a waiting transfer (activities/depositWatcher.ts, activities/privacyWatcher.ts): the
 * payloads of the `depositObserved` and `privacyObserved` signals (workflows/definitions.ts), spelled once.
 */

/** The ASP's review of a note in the privacy pool. */
export type NoteReview = 'pending' | 'approved' | 'rejected';

/**
 * What the deposit watcher tells a waiting transfer: its deposit address's balance of the route's token at a block.
 * Sent again after every new transfer into the address; an older block never overrides a newer one.
 */
export interface DepositObservation {
  balance: string;
  blockNumber: number;
}

/** Why a note's gate opened: its anonymity set reached the route's minimum, or it waited its longest (src/privacy/gate.ts). */
export type GateReason = 'set-reached' | 'max-wait';

/**
 * How an anonymity set was counted (src/privacy/anonymitySet.ts): by the closed form for nested candidate sets, by
 * counting every matching, or not at all (reported as 1) because the matchings were too many to count or none fit.
 */
export type CountMethod = 'nested' | 'counted' | 'too-tangled' | 'contradictory';

/** What one gate decision counted (pool_notes.gate_log), in a form an operator reads without the tables (routectl show). */
export interface GateLog {
  /** The exit epoch it counted for (ISO time of its start). */
  epoch: string;
  /** The note's set if it left then, the minimum its route asked for, and how the set was counted. */
  set: number;
  minimum: number;
  method: CountMethod;
  /** The gated notes it would hide among (its cohort included), and the distinct clients among them and itself. */
  candidates: number;
  clients: number;
  /** Notes whose gates open together with this one (itself included; 0 while its own stays closed). */
  cohort: number;
  /** The class's withdrawals before it (exits drawn but not made count as made), and how many of them are settled. */
  withdrawals: number;
  settled: number;
  /** Notes of the class still waiting at their gates: not counted. */
  waiting: number;
}

/** The exit the lottery drew for a gated note: it withdraws at `at` (ms), a moment of the exit epoch starting at `epochStartsAt`. */
export interface ExitDraw {
  at: number;
  epochStartsAt: number;
  epochSeconds: number;
  /** Why its gate opened: a route that waited its longest leaves whatever its set. */
  gate: GateReason;
}

/**
 * What the privacy watcher tells a shielded transfer: the ASP's review of its note, its anonymity set as the gate last
 * counted it, and, once the exit lottery drew it, when to leave. Sent when the review changes and when an exit is drawn.
 */
export interface PrivacyObservation {
  review: NoteReview;
  anonymitySet: number;
  exit?: ExitDraw;
}
