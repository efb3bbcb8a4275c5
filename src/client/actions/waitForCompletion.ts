import type { ClientContext } from '../context.ts';
import { PrivateRouteFailedError } from '../errors.ts';
import type { WaitOptions } from '../options.ts';
import type { View } from './getTransfer.ts';
import { pollUntilDone } from './pollStatus.ts';
import { OnStatusFailure, statusTracker } from './statusTracker.ts';
import { streamUntilDone } from './streamStatus.ts';

/**
 * Follows the transfer to its end: by its event stream unless `transport` is `poll`, then by polling should the
 * stream give up. Resolves with the final view once COMPLETED; rejects with PrivateRouteFailedError once FAILED.
 */
export async function waitForCompletion(ctx: ClientContext, routeId: string, waitOptions: WaitOptions = {}): Promise<View> {
  const { statusToken, signal } = waitOptions;
  const pollIntervalMs = waitOptions.pollIntervalMs ?? 3000;
  const firstEventTimeoutMs = waitOptions.firstEventTimeoutMs ?? 10_000;
  signal?.throwIfAborted();

  const tracker = statusTracker(waitOptions);
  const finish = (view: View): View => {
    if (view.status === 'FAILED') throw new PrivateRouteFailedError(view);
    return view;
  };

  try {
    if (waitOptions.transport !== 'poll') {
      const streamed = await streamUntilDone(ctx, { routeId, statusToken, firstEventTimeoutMs, signal }, tracker);
      if (streamed) return finish(streamed);
    }
    return finish(await pollUntilDone(ctx, routeId, statusToken, pollIntervalMs, tracker, signal));
  } catch (error) {
    // The caller's onStatus threw: the wait ends with that very error.
    throw error instanceof OnStatusFailure ? error.error : error;
  }
}
