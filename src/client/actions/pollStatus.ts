import type { ClientContext } from '../context.ts';
import { PrivateRouteApiError } from '../errors.ts';
import { backoff, isTransient, sleep } from '../retry.ts';
import { getTransfer, type View } from './getTransfer.ts';
import { OnStatusFailure, type StatusTracker } from './statusTracker.ts';

/** Polls the transfer until it is finished and resolves with its final view. */
export async function pollUntilDone(
  ctx: ClientContext,
  routeId: string,
  statusToken: string | undefined,
  pollIntervalMs: number,
  tracker: StatusTracker,
  signal: AbortSignal | undefined,
): Promise<View> {
  // Polling: a GET every pollIntervalMs; transient failures (network, 5xx, 429) only delay the next one.
  for (let failures = 0; ; ) {
    try {
      const view = await getTransfer(ctx, routeId, statusToken, signal);
      failures = 0;
      if (tracker.seen(view)) return view;
      await sleep(pollIntervalMs, signal);
    } catch (error) {
      if (error instanceof OnStatusFailure || !isTransient(error)) throw error;
      failures++;
      const retryAfter = error instanceof PrivateRouteApiError ? error.retryAfterSeconds : undefined;
      await sleep(Math.max(pollIntervalMs, retryAfter !== undefined ? retryAfter * 1000 : backoff(failures)), signal);
    }
  }
}
