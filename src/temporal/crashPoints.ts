import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/**
 * Named instants at which a drill (`npm run drill`) kills the worker with SIGKILL, to show that a crash
 * at any of them loses nothing and pays nothing twice. Inert unless DRILL_CRASH_AT names the point; set
 * only by the drill on a devnet worker, never in production.
 *
 * Points: `tx:signed` (a send is written ahead and signed, not broadcast), `tx:broadcast` (broadcast, its
 * outcome not recorded), `before:<activity>` and `after:<activity>` (an activity's start, and its end
 * before Temporal hears of the result). `DRILL_CRASH_AT` may hold several, comma-separated.
 */
export function crashPoint(name: string): void {
  const wanted = process.env.DRILL_CRASH_AT;
  if (!wanted?.split(',').includes(name)) return;
  process.stderr.write(`drill: killing the worker at ${name}\n`);
  process.kill(process.pid, 'SIGKILL');
}

/** Crash points at every activity's start and end (see crashPoint). */
export const activityCrashPoints: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      crashPoint(`before:${ctx.info.activityType}`);
      const result = await next(input);
      crashPoint(`after:${ctx.info.activityType}`);
      return result;
    },
  },
});
