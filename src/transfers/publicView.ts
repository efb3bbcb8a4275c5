import { createHash } from 'node:crypto';
import { isTerminalStatus, type TransferStatus } from '../domain/status.ts';
import { epochStart } from '../privacy/exitEpochs.ts';

/**
 * What a holder of a routeId without its statusToken may learn of the route's progress, and when (docs/privacy.md,
 * "Quiet public channels"). Pure: src/transfers/transferService.ts reads the history and asks here.
 *
 * - The view moves only when an exit epoch begins: it shows what the route had reached by the start of the current one.
 * - Funded, it shows `BRIDGING_IN` until it ends: the pool's deposit and withdrawal, and the bridge-out, never show
 *   (their moments would name the route's pool transactions).
 * - Its end (`COMPLETED`, `FAILED`) shows `delayMs` (a delay of the route's own, up to PUBLIC_STATUS_DELAY_MAX_SECONDS)
 *   after the later of the end and `holdMs` after the funding (PUBLIC_STATUS_HOLD_SECONDS, at least the longest wait):
 *   for a route that ends within the hold, the moment it shows follows its funding, which is public anyway, and tells
 *   nothing of its end; a slower one shows it a delay of its own after it.
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
  /** The route's own delay after its end. */
  delayMs: number;
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

/** The public view's clock settings (PRIVACY_EXIT_EPOCH_SECONDS, PUBLIC_STATUS_DELAY_MAX_SECONDS, PUBLIC_STATUS_HOLD_SECONDS). */
export interface PublicViewSettings {
  epochSeconds: number;
  endDelayMaxSeconds: number;
  holdSeconds: number;
}

/** The clock of one route's public view: the service's settings and the route's own delay. */
export function publicClockOf(route: { routeId: string; statusTokenHash: string | null }, settings: PublicViewSettings): PublicClock {
  return {
    epochSeconds: settings.epochSeconds,
    delayMs: publicEndDelayMs(route, settings.endDelayMaxSeconds * 1000),
    holdMs: settings.holdSeconds * 1000,
  };
}

/** The status the public view shows at `now` (ms), from the route's history of statuses. */
export function publicStatusAt(history: readonly StatusReached[], opts: PublicClock & { now: number }): PublicStatus {
  const begun = epochStart(opts.now, opts.epochSeconds);
  const reached = history.filter((h) => h.reachedAt.getTime() <= begun);
  const ended = reached.find((h) => isTerminalStatus(h.status));
  if (ended) {
    const shownAt = publicEndShownAt(ended.reachedAt.getTime(), { ...opts, fundedAt: fundedAt(history) });
    if (shownAt <= begun) return { status: ended.status as TransferStatus, seq: 2, since: new Date(shownAt) };
  }
  const moved = reached.filter(inProgress);
  if (moved.length > 0) return { status: 'BRIDGING_IN', seq: 1, since: moved[0]!.reachedAt };
  // An end not public yet, of a route that never got its deposit: it still shows as awaiting it.
  return { status: 'AWAITING_DEPOSIT', seq: 0, since: null };
}

/**
 * When the public view first shows an end reached at `endedAt` (ms): the first epoch start `delayMs` after the later of
 * the end and `holdMs` after the funding (`fundedAt`; null: a route never funded, held by nothing but its delay).
 */
export function publicEndShownAt(endedAt: number, opts: PublicClock & { fundedAt: number | null }): number {
  // The delay after the later of the end and the hold: a route slower than the hold shows its end a delay of its own
  // after it, never at it.
  const due = Math.max(endedAt, opts.fundedAt === null ? 0 : opts.fundedAt + (opts.holdMs ?? 0)) + opts.delayMs;
  const start = epochStart(due, opts.epochSeconds);
  return start === due ? due : start + opts.epochSeconds * 1000;
}

/**
 * The route's own delay before its end shows publicly, a uniform fraction of `maxMs` that only the service can tell:
 * drawn from the stored hash of its statusToken (the routeId for transfers created before statusTokens).
 */
export function publicEndDelayMs(route: { routeId: string; statusTokenHash: string | null }, maxMs: number): number {
  if (maxMs <= 0) return 0;
  const digest = createHash('sha256')
    .update(`public-end-delay|${route.statusTokenHash ?? route.routeId}`)
    .digest();
  return Math.floor((digest.readUInt32BE(0) / 2 ** 32) * maxMs);
}
