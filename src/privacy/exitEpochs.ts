/**
 * Exit epochs (docs/privacy.md, "Exit epochs"): routes leave the pool in epochs of PRIVACY_EXIT_EPOCH_SECONDS on the
 * clock. A route whose gate opens in one epoch withdraws at a uniformly random moment of the next, so a withdrawal's
 * time tells which epoch its gate opened in and nothing finer. Pure: the workflow and the anonymity set both use it.
 */

/** The service's exit epochs and longest wait (PRIVACY_EXIT_EPOCH_SECONDS, PRIVACY_MAX_WAIT_SECONDS). */
export interface ExitRules {
  epochSeconds: number;
  maxWaitSeconds: number;
}

/** The exit epoch a withdrawal leaves in, and how long a route waits at most: which notes could leave in it. */
export interface ExitTiming {
  /** The exit epoch's start (ms since 1970) and length. */
  startsAt: number;
  epochMs: number;
  /** PRIVACY_MAX_WAIT_SECONDS in ms. */
  maxWaitMs: number;
}

/** The start (ms) of the epoch after the one `now` (ms) falls in. */
export function nextEpochStart(now: number, epochSeconds: number): number {
  const epochMs = epochSeconds * 1000;
  return (Math.floor(now / epochMs) + 1) * epochMs;
}

/** The exit epoch of a route whose gate opens at `now`: the next one. */
export function nextExitEpoch(rules: ExitRules, now: number): ExitTiming {
  return { startsAt: nextEpochStart(now, rules.epochSeconds), epochMs: rules.epochSeconds * 1000, maxWaitMs: rules.maxWaitSeconds * 1000 };
}

/**
 * Whether a note could be leaving in the exit epoch `timing`: approved before it began, and not past its longest wait
 * before the epoch before it (the slack of two epochs covers a route that waited its longest after a deferred withdrawal).
 */
export function couldLeaveIn(note: { depositedAt: number; approvedAt: number | null }, timing: ExitTiming): boolean {
  if (note.approvedAt === null || note.approvedAt >= timing.startsAt) return false;
  const gateEpochStart = timing.startsAt - timing.epochMs;
  return note.depositedAt + timing.maxWaitMs + 2 * timing.epochMs >= gateEpochStart;
}
