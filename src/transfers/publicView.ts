import { createHash } from 'node:crypto';
import type { TransferStatus } from '../../workflows/types.ts';
import { epochStart } from '../privacy/exitEpochs.ts';

/**
 * What a holder of a routeId without its statusToken may learn of the route's progress, and when (docs/privacy.md,
 * "Quiet public channels"). Pure: src/transfers/transferService.ts reads the history and asks here.
 *
 * - The view moves only when an exit epoch begins: it shows what the route had reached by the start of the current one.
 * - Funded, it shows `BRIDGING_IN` until it ends: the pool's deposit and withdrawal, and the bridge-out, never show
 *   (their moments would name the route's pool transactions).
 * - Its end (`COMPLETED`, `FAILED`) shows only `delayMs` after it happened (a delay of the route's own, up to
 *   PUBLIC_STATUS_DELAY_MAX_SECONDS): the moment it shows tells which payouts it could be only to within that delay.
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

const ENDED = new Set(['COMPLETED', 'FAILED']);

/** The status the public view shows at `now` (ms), from the route's history of statuses. */
export function publicStatusAt(history: readonly StatusReached[], opts: { now: number; epochSeconds: number; delayMs: number }): PublicStatus {
  const begun = epochStart(opts.now, opts.epochSeconds);
  const reached = history.filter((h) => h.reachedAt.getTime() <= begun);
  const ended = reached.find((h) => ENDED.has(h.status));
  if (ended && ended.reachedAt.getTime() + opts.delayMs <= begun) {
    return { status: ended.status as TransferStatus, seq: 2, since: new Date(ended.reachedAt.getTime() + opts.delayMs) };
  }
  const moved = reached.filter((h) => h.status !== 'AWAITING_DEPOSIT' && !ENDED.has(h.status));
  if (moved.length > 0) return { status: 'BRIDGING_IN', seq: 1, since: moved[0]!.reachedAt };
  // An end not public yet, of a route that never got its deposit: it still shows as awaiting it.
  return { status: 'AWAITING_DEPOSIT', seq: 0, since: null };
}

/** When the public view first shows an end reached at `endedAt` (ms): the first epoch start `delayMs` or more after it. */
export function publicEndShownAt(endedAt: number, opts: { epochSeconds: number; delayMs: number }): number {
  const due = endedAt + opts.delayMs;
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
