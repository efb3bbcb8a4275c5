/**
 * Exit epochs (docs/privacy.md, "Exit epochs"): routes leave the pool in epochs of PRIVACY_EXIT_EPOCH_SECONDS on the
 * clock. A route whose gate opens in one epoch withdraws at a uniformly random moment of the next, so a withdrawal's
 * time tells which epoch its gate opened in and nothing finer. Pure: the workflow and the anonymity set both use it.
 */

/** The service's exit epochs and longest wait (PRIVACY_EXIT_EPOCH_SECONDS, PRIVACY_MAX_WAIT_SECONDS). */
export interface ExitRules {
  epochSeconds: number;
  maxWaitSeconds: number;
  /** PRIVACY_MIN_PEER_AGE_SECONDS: a peer counts once it has been in the pool this long when the exit epoch begins. */
  minPeerAgeSeconds?: number;
}

/** The exit epoch a withdrawal leaves in, and how long a route waits at most: which notes could leave in it. */
export interface ExitTiming {
  /** The exit epoch's start (ms since 1970) and length. */
  startsAt: number;
  epochMs: number;
  /** PRIVACY_MAX_WAIT_SECONDS in ms. */
  maxWaitMs: number;
  /** PRIVACY_MIN_PEER_AGE_SECONDS in ms (absent: 0). */
  minPeerAgeMs?: number;
  /**
   * The withdrawal leaves at its longest wait: only notes whose own longest wait (from their deposit's epoch) had ended
   * when the exit epoch began count. A note still inside its wait had its chances to leave and did not: an observer who
   * watched the class counts it out, and the routes of a thin class would otherwise leave in the order they came.
   */
  dueOnly?: boolean;
}

/** The start (ms) of the epoch `now` (ms) falls in. */
export function epochStart(now: number, epochSeconds: number): number {
  const epochMs = epochSeconds * 1000;
  return Math.floor(now / epochMs) * epochMs;
}

/** The start (ms) of the epoch after the one `now` (ms) falls in. */
export function nextEpochStart(now: number, epochSeconds: number): number {
  return epochStart(now, epochSeconds) + epochSeconds * 1000;
}

/** The exit epoch of a route whose gate opens at `now`: the next one. */
export function nextExitEpoch(rules: ExitRules, now: number): ExitTiming {
  return {
    startsAt: nextEpochStart(now, rules.epochSeconds),
    epochMs: rules.epochSeconds * 1000,
    maxWaitMs: rules.maxWaitSeconds * 1000,
    ...(rules.minPeerAgeSeconds && { minPeerAgeMs: rules.minPeerAgeSeconds * 1000 }),
  };
}

/**
 * Whether a note counts as a peer of a withdrawal in the exit epoch `timing`: it could be leaving in it (approved before
 * it began, and not past its longest wait before the epoch before it; the slack of two epochs covers a route that waited
 * its longest after a deferred withdrawal), and it had been in the pool `minPeerAgeMs` when the epoch began (a burst of
 * deposits made to complete a victim's set must wait that long before it counts); for a withdrawal at its longest wait
 * (`dueOnly`), its own longest wait had ended when the epoch began.
 */
export function couldLeaveIn(note: { depositedAt: number; approvedAt: number | null }, timing: ExitTiming): boolean {
  if (note.approvedAt === null || note.approvedAt >= timing.startsAt) return false;
  if (note.depositedAt + (timing.minPeerAgeMs ?? 0) > timing.startsAt) return false;
  const gateEpochStart = timing.startsAt - timing.epochMs;
  if (timing.dueOnly && epochStart(note.depositedAt, timing.epochMs / 1000) + timing.maxWaitMs > timing.startsAt) return false;
  return note.depositedAt + timing.maxWaitMs + 2 * timing.epochMs >= gateEpochStart;
}
