import type { ClientContext } from '../context.ts';
import { PrivateRouteFailedError } from '../errors.ts';
import type { WaitOptions } from '../options.ts';
import type { View } from './getTransfer.ts';
import { pollUntilDone } from './pollStatus.ts';
import { OnStatusFailure, statusTracker } from './statusTracker.ts';
import { quietPollUntilDone } from './quietPoll.ts';
import { streamUntilDone } from './streamStatus.ts';

/** How long the quiet transport reads on after the end, at most (a uniformly random part of it). */
const QUIET_AFTER_END_MS = 600_000;

/**
 * Follows the transfer to its end: by default with quiet reads at a fixed rate that go on for a while after the end
 * (`quiet`); by its event stream, then by polling should the stream give up (`auto`); or by polling (`poll`). Resolves
 * with the final view once COMPLETED; rejects with PrivateRouteFailedError once FAILED.
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
    const transport = waitOptions.transport ?? 'quiet';
    if (transport === 'quiet') {
      const afterEndMs = waitOptions.quietAfterEndMs ?? QUIET_AFTER_END_MS;
      return finish(await quietPollUntilDone(ctx, { routeId, statusToken, intervalMs: pollIntervalMs, afterEndMs, signal }, tracker));
    }
    if (transport === 'auto') {
      const streamed = await streamUntilDone(ctx, { routeId, statusToken, firstEventTimeoutMs, signal }, tracker);
      if (streamed) return finish(streamed);
    }
    return finish(await pollUntilDone(ctx, routeId, statusToken, pollIntervalMs, tracker, signal));
  } catch (error) {
    // The caller's onStatus threw: the wait ends with that very error.
    throw error instanceof OnStatusFailure ? error.error : error;
  }
}
