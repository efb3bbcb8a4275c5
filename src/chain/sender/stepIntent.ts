import type { Db } from '../../db/client.ts';
import { describe, type Intent, markVoided, nonceSiblings, stepRows } from '../intentStore.ts';
import type { SenderContext } from './context.ts';
import { liveIntent, minedAfterVoidMove, voidedMinedMove } from './decide.ts';
import { IntentConflictError } from './errors.ts';
import { minedAttempt, recordMined } from './receipts.ts';

/**
 * The step's transaction: its live intent, else a voided one that mined after all (recorded as mined: what the
 * chain did wins over the record). Null when the step never signed, or signed only voided intents that never mined.
 */
export async function stepIntent(ctx: SenderContext, routeId: string, step: string, handle: Db = ctx.db): Promise<Intent | null> {
  const rows = await stepRows(handle, routeId, step);
  let live = liveIntent(rows);
  if (live?.status === 'mined') return live;
  for (const voided of rows.filter((row) => row.status === 'voided')) {
    const hash = await minedAfterVoid(ctx, voided, handle);
    if (!hash) continue;
    const move = voidedMinedMove(live, voided);
    if (move.kind === 'conflict' && live) {
      await recordMined(ctx, voided, hash, handle);
      throw new IntentConflictError(
        `${describe(voided)} was voided but mined after all, and ${describe(live)} of the same step is pending at another nonce: it could pay again. Cancel it with \`routectl void ${live.id} --cancel\`; the step then takes the mined one`,
      );
    }
    if (move.kind === 'void-live-take-voided' && live) {
      await markVoided(handle, live, `its nonce was used by intent #${voided.id} (voided earlier, mined after all)`);
      live = null;
    }
    return recordMined(ctx, voided, hash, handle);
  }
  return live;
}

/** The mined attempt of a voided intent: as recorded, or found on chain (unless a recorded sibling mined at its nonce). */
async function minedAfterVoid(ctx: SenderContext, row: Intent, handle: Db): Promise<string | null> {
  let move = minedAfterVoidMove(row);
  if (move.kind === 'look-at-siblings') move = minedAfterVoidMove(row, await nonceSiblings(handle, row));
  if (move.kind === 'recorded') return move.hash;
  if (move.kind === 'none') return null;
  return (await minedAttempt(ctx, row))?.transactionHash ?? null;
}
