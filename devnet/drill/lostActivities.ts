/**
 * The activities of the drill's transfers that a killed worker had started: lost with it (Temporal retries them),
 * then followed until they complete, which is how the report measures each next worker's recovery.
 */
import { hostname } from 'node:os';
import { decodePendingActivityState } from '@temporalio/client';
import { type DrillContext, stackOf, type WorkerProcess } from './context.ts';
import { createdTransfers, type DrillEventOf, lostActivities } from './events.ts';
import { sleep } from './waiting.ts';

/** Records the activities still started by the dead worker, as Temporal sees them; returns them. */
export async function recordLostActivities(ctx: DrillContext, worker: WorkerProcess): Promise<DrillEventOf<'activity-lost'>[]> {
  const stack = stackOf(ctx);
  const identity = `${worker.pid}@${hostname()}`;
  // A completion the worker sent just before it died may still reach the server: only what stays started was lost.
  await sleep(1000);
  const lost: DrillEventOf<'activity-lost'>[] = [];
  for (const c of createdTransfers(ctx.events.events)) {
    const described = await stack.temporal.client.workflow
      .getHandle(c.routeId)
      .describe()
      .catch(() => null);
    for (const a of described?.raw.pendingActivities ?? []) {
      if (decodePendingActivityState(a.state) !== 'STARTED' || a.lastWorkerIdentity !== identity || !a.activityId) continue;
      const event = {
        type: 'activity-lost',
        at: Date.now(),
        worker: worker.index,
        routeId: c.routeId,
        activityId: a.activityId,
        activityType: a.activityType?.name ?? '?',
        attempt: a.attempt ?? 1,
      } as const;
      ctx.events.append(event);
      lost.push(event);
    }
  }
  return lost;
}

/** Follows the lost activities not yet completed (a describe of their workflows twice a second) until stopped. */
export function followLostActivities(ctx: DrillContext): { stop(): Promise<void> } {
  const stack = stackOf(ctx);
  let following = true;
  const loop = (async () => {
    while (following) {
      const open = lostActivities(ctx.events.events).filter((x) => x.completedAt === null);
      const byRoute = new Map<string, typeof open>();
      for (const x of open) byRoute.set(x.routeId, [...(byRoute.get(x.routeId) ?? []), x]);
      await Promise.all(
        [...byRoute].map(async ([routeId, items]) => {
          try {
            const described = await stack.temporal.client.workflow.getHandle(routeId).describe();
            const pending = new Set((described.raw.pendingActivities ?? []).map((a) => a.activityId));
            for (const x of items) if (!pending.has(x.activityId)) ctx.events.append({ type: 'activity-completed', routeId, activityId: x.activityId });
          } catch {
            // Temporal is restarting: the next round looks again.
          }
        }),
      );
      await sleep(500);
    }
  })();
  return {
    stop: () => {
      following = false;
      return loop;
    },
  };
}
