import { createHash } from 'node:crypto';
import { isTerminalStatus, type TransferStatus } from '../domain/status.ts';
import { epochStart } from '../privacy/exitEpochs.ts';

/**
 * What a holder of a routeId without its statusToken may learn of the route's progress, and when (docs/privacy.md,
 * "Quiet public channels"). Pure: src/transfers/transferService.ts reads the history and asks here.
 *
 * - The view moves only when an exit epoch begins: it shows what the route had reached by the start of the current one.
 * - Funded, it shows `BRIDGING_IN` until it ends, from `delayMs` (a delay of the route's own, up to
 *   PUBLIC_STATUS_DELAY_MAX_SECONDS) after the funding: shown at the next epoch, it would date the funding to an
 *   epoch, and so name the deposit, and its sender, among the few of that epoch (issue 33). The pool's deposit and
 *   withdrawal, and the bridge-out, never show (their moments would name the route's pool transactions).
 * - Its end (`COMPLETED`, `FAILED`) shows at the first epoch start `holdMs` (PUBLIC_STATUS_HOLD_SECONDS, at least the
 *   longest wait) after `BRIDGING_IN` showed, or, for a route that ended past the hold after its funding, at the first
 *   epoch start `lateDelayMs` after its end if that is later. `lateDelayMs` is a draw of its own: with `delayMs` again, the gap
 *   between the two moments would be the route's exact duration. Never before the hold after `BRIDGING_IN`: an end
 *   shown sooner would bound the funding from above, closer than `BRIDGING_IN` does (a slow route's end comes at least
 *   the hold after its funding). A route never funded shows its end `delayMs` after it.
 * `seq` numbers the public view's own changes: 0 awaiting the deposit, 1 in progress, 2 ended.
 */
export interface StatusReached {
  status: string;
  reachedAt: Date;
}

export interface PublicStatus {
  status: TransferStatus;
  seq: 0 | 1 | 2;
  /** When the shown status became public (for the flags that follow it); null while awaiting the deposit. */
  since: Date | null;
}

export interface PublicClock {
  epochSeconds: number;
  /** The route's own delay: from its funding to `BRIDGING_IN`'s showing, and after the hold (or an unfunded end). */
  delayMs: number;
  /** The route's own delay after an end past the hold, drawn apart from `delayMs` (unset: `delayMs`). */
  lateDelayMs?: number;
  /** The least time from its funding to its end's showing (0: none). */
  holdMs?: number;
}

/** A status between awaiting the deposit and the end: the route was funded. */
const inProgress = (h: StatusReached) => h.status !== 'AWAITING_DEPOSIT' && !isTerminalStatus(h.status);

/** When the route was funded, as its history shows: its first status between awaiting the deposit and the end. */
export function fundedAt(history: readonly StatusReached[]): number | null {
  const moved = history.filter(inProgress);
  return moved.length > 0 ? Math.min(...moved.map((h) => h.reachedAt.getTime())) : null;
}

/**
 * What a route's own public delays are drawn from: the hash of its first statusToken (`publicDelaySeed` once the token
 * was reissued, as the token's hash changed then; undefined for callers that never reissue).
 */
export interface DelaySeeded {
  statusTokenHash: string | null;
  publicDelaySeed?: string | null;
}

/** The public view's clock settings (PRIVACY_EXIT_EPOCH_SECONDS, PUBLIC_STATUS_DELAY_MAX_SECONDS, PUBLIC_STATUS_HOLD_SECONDS). */
export interface PublicViewSettings {
  epochSeconds: number;
  endDelayMaxSeconds: number;
  holdSeconds: number;
}

/** The clock of one route's public view: the service's settings and the route's own delays. */
export function publicClockOf(route: DelaySeeded, settings: PublicViewSettings): PublicClock {
  const maxMs = settings.endDelayMaxSeconds * 1000;
  return {
    epochSeconds: settings.epochSeconds,
    delayMs: publicDelayMs(route, maxMs),
    lateDelayMs: publicLateEndDelayMs(route, maxMs),
    holdMs: settings.holdSeconds * 1000,
  };
}

/** The status the public view shows at `now` (ms), from the route's history of statuses. */
export function publicStatusAt(history: readonly StatusReached[], opts: PublicClock & { now: number }): PublicStatus {
  const begun = epochStart(opts.now, opts.epochSeconds);
  const reached = history.filter((h) => h.reachedAt.getTime() <= begun);
  const funded = fundedAt(history);
  const ended = reached.find((h) => isTerminalStatus(h.status));
  if (ended) {
    const shownAt = publicEndShownAt(ended.reachedAt.getTime(), { ...opts, fundedAt: funded });
    if (shownAt <= begun) return { status: ended.status as TransferStatus, seq: 2, since: new Date(shownAt) };
  }
  if (funded !== null && funded <= begun) {
    const shownAt = publicProgressShownAt(funded, opts);
    if (shownAt <= begun) return { status: 'BRIDGING_IN', seq: 1, since: new Date(shownAt) };
  }
  // An end not public yet, of a route that never got its deposit: it still shows as awaiting it.
  return { status: 'AWAITING_DEPOSIT', seq: 0, since: null };
}

/** When the public view first shows `BRIDGING_IN` of a route funded at `fundedAt` (ms): the first epoch start its own delay after. */
export function publicProgressShownAt(fundedAt: number, opts: Pick<PublicClock, 'epochSeconds' | 'delayMs'>): number {
  return epochCeiling(fundedAt + opts.delayMs, opts.epochSeconds);
}

/**
 * When the public view first shows an end reached at `endedAt` (ms): the first epoch start `holdMs` after `BRIDGING_IN`
 * showed; for an end past the hold after the funding, the first one `lateDelayMs` after the end if that is later;
 * never funded (`fundedAt` null), the first epoch start `delayMs` after the end.
 */
export function publicEndShownAt(endedAt: number, opts: PublicClock & { fundedAt: number | null }): number {
  if (opts.fundedAt === null) return epochCeiling(endedAt + opts.delayMs, opts.epochSeconds);
  const afterHold = epochCeiling(publicProgressShownAt(opts.fundedAt, opts) + (opts.holdMs ?? 0), opts.epochSeconds);
  // An end within the hold after the funding: that moment, whatever the end was.
  if (endedAt <= opts.fundedAt + (opts.holdMs ?? 0)) return afterHold;
  return Math.max(afterHold, epochCeiling(endedAt + (opts.lateDelayMs ?? opts.delayMs), opts.epochSeconds));
}

/** The first epoch start at or after `ms`. */
function epochCeiling(ms: number, epochSeconds: number): number {
  const start = epochStart(ms, epochSeconds);
  return start === ms ? ms : start + epochSeconds * 1000;
}

/**
 * The route's own public delay, a uniform fraction of `maxMs` that only the service can tell: drawn from the stored
 * hash of its statusToken (transfers created before statusTokens got a random one, never a token's, in migration 0023).
 */
export function publicDelayMs(route: DelaySeeded, maxMs: number): number {
  // The label predates BRIDGING_IN's delay: a route's end keeps the moment it had.
  return ownDelayMs('public-end-delay', route, maxMs);
}

/** The route's own delay after an end past the hold: as publicDelayMs, from a draw of its own. */
export function publicLateEndDelayMs(route: DelaySeeded, maxMs: number): number {
  return ownDelayMs('public-late-end-delay', route, maxMs);
}

function ownDelayMs(purpose: string, route: DelaySeeded, maxMs: number): number {
  if (maxMs <= 0) return 0;
  const seed = route.publicDelaySeed ?? route.statusTokenHash;
  // No hash (a row written by a version from before statusTokens, after migration 0023): the longest delay, never one
  // drawn from what a routeId holder knows.
  if (seed === null) return maxMs;
  const digest = createHash('sha256').update(`${purpose}|${seed}`).digest();
  return Math.floor((digest.readUInt32BE(0) / 2 ** 32) * maxMs);
}
