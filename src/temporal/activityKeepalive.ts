import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/**
 * How often a running activity reports that its worker is alive: half the heartbeat timeout (5 s for 10 s).
 * An activity that ends sooner sends none, and the SDK forwards at most one per 80 % of the timeout after
 * that, so Temporal records few (each is a billed Action in Temporal Cloud) while a dead worker is still
 * noticed within the timeout.
 */
export const KEEPALIVE_INTERVAL_MS = 5_000;

/**
 * Heartbeats for every activity that has a heartbeat timeout, for as long as it runs, repeating the
 * details of its own last heartbeat. A worker that dies (kill -9, OOM) stops heartbeating, so Temporal
 * retries its activities on another worker after the short heartbeat timeout instead of waiting out
 * the start-to-close timeout. Progress is the activities' business; this only proves liveness.
 */
export const activityKeepalive: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      if (!ctx.info.heartbeatTimeoutMs) return next(input);
      const own = ctx.heartbeat;
      let lastDetails: unknown;
      (ctx as { heartbeat: Context['heartbeat'] }).heartbeat = (details?: unknown) => {
        lastDetails = details;
        own(details);
      };
      const timer = setInterval(() => own(lastDetails), Math.min(KEEPALIVE_INTERVAL_MS, ctx.info.heartbeatTimeoutMs / 2));
      try {
        return await next(input);
      } finally {
        clearInterval(timer);
      }
    },
  },
});
