import type { ClientContext } from '../context.ts';
import { isTransient, sleep } from '../retry.ts';
import { getTransfer, type View } from './getTransfer.ts';
import type { StatusTracker } from './statusTracker.ts';

/**
 * The quiet transport: one GET at a fixed rate (every `intervalMs` from the first, whatever the answers), so a network
 * observer of this client (an ISP, a VPN, a TLS-terminating proxy) sees reads of one size (the API pads the full
 * view) at one cadence and no moment at which a status changed. The wait resolves at the end, but the reads go on at
 * the same rate for a random time up to `afterEndMs` in the background (never reported; the signal stops them, and they
 * keep no process alive): hanging up at COMPLETED would time the payout.
 */
export async function quietPollUntilDone(
  ctx: ClientContext,
  opts: { routeId: string; statusToken: string | undefined; intervalMs: number; afterEndMs: number; signal: AbortSignal | undefined },
  tracker: StatusTracker,
): Promise<View> {
  const { routeId, statusToken, intervalMs, signal } = opts;
  const started = Date.now();
  let tick = 0;
  const nextTick = async (unref = false) => {
    tick += 1;
    await sleep(Math.max(0, started + tick * intervalMs - Date.now()), signal, unref);
  };
  for (;;) {
    let view: View | undefined;
    try {
      view = await getTransfer(ctx, routeId, statusToken, signal);
    } catch (error) {
      // A transient failure is only a missed tick: backing off would change the cadence an observer sees.
      if (signal?.aborted || !isTransient(error)) throw error;
    }
    if (view && tracker.seen(view)) {
      void keepReading(Math.random() * opts.afterEndMs);
      return view;
    }
    await nextTick();
  }

  async function keepReading(forMs: number): Promise<void> {
    const until = Date.now() + forMs;
    try {
      for (;;) {
        await nextTick(true);
        if (Date.now() >= until) return;
        await getTransfer(ctx, routeId, statusToken, signal).catch(() => undefined);
      }
    } catch {
      // Aborted: the caller stopped the reads.
    }
  }
}
