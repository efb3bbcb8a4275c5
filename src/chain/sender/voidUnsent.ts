import { type Intent, lockSender, markVoided, pendingFrom, pendingOfRoute } from '../intentStore.ts';
import { type SenderContext, sleep, usedNonces } from './context.ts';
import { LOOKS, unsentTail } from './decide.ts';

/** `IntentControl.voidUnsent`: voids the route's intents no node has that end their sender's queue. */
export async function voidUnsent(ctx: SenderContext, routeId: string, reason: string): Promise<Intent[]> {
  const mine = await pendingOfRoute(ctx.db, routeId);
  const senders = new Map(mine.map((row) => [`${row.chainId}:${row.fromAddress}`, row]));
  const voided: Intent[] = [];
  for (const sender of senders.values()) {
    await ctx.db.transaction(async (tx) => {
      await lockSender(tx, sender.chainId, sender.fromAddress);
      // The highest of several looks: a node that has not seen a broadcast yet must not make it look unsent.
      let pending = 0;
      for (let look = 0; look < LOOKS; look++) {
        if (look > 0) await sleep(ctx.timings.pollIntervalMs);
        pending = Math.max(pending, await usedNonces(ctx, sender, 'pending'));
      }
      const tail = await pendingFrom(tx, sender, pending, 'desc');
      for (const row of unsentTail(tail, routeId)) voided.push(await markVoided(tx, row, reason));
    });
  }
  return voided;
}
