import { describe, type Intent, intentById, markVoided } from '../intentStore.ts';
import { reload, type SenderContext, sleep, usedNonces } from './context.ts';
import { voidLookMove, voidRequestMove } from './decide.ts';
import { VoidRefusedError } from './errors.ts';
import { minedAttempt, minedSibling, recordMined } from './receipts.ts';

/**
 * `IntentControl.void`: voids an intent whose nonce is used and none of whose attempts mined. Which transaction
 * used the nonce is confirmed over several looks before anything is voided: a node that lags must not make a mined
 * intent look unmined (the step would sign, and pay, again).
 */
export async function voidIntent(ctx: SenderContext, id: number, reason: string): Promise<Intent> {
  const row = await intentById(ctx.db, id);
  let request = voidRequestMove(row);
  if (request.kind === 'look-at-nonce' && row) request = voidRequestMove(row, await usedNonces(ctx, row));
  if (request.kind === 'refuse-unknown' || !row) throw new VoidRefusedError(`there is no intent #${id}`);
  if (request.kind === 'already-voided') return row;
  if (request.kind === 'refuse-may-still-mine') {
    throw new VoidRefusedError(
      `${describe(row)} may still mine: nonce ${row.nonce} of ${row.fromAddress} on chain ${row.chainId} is unused. Replace it first with \`routectl void ${id} --cancel\``,
    );
  }
  let current = row;
  for (let look = 0; ; look++) {
    if (look > 0) await sleep(ctx.timings.pollIntervalMs);
    current = await reload(ctx, current); // another process may have replaced it, or recorded it mined
    const move = voidLookMove({ intent: current, look, receipt: await minedAttempt(ctx, current) });
    switch (move.kind) {
      case 'refuse-mined':
        await recordMined(ctx, current, move.receipt.transactionHash);
        throw new VoidRefusedError(
          `${describe(row)} mined (${move.receipt.status === 'success' ? 'successfully' : 'reverted'}, tx ${move.receipt.transactionHash}); there is nothing to void`,
        );
      case 'look-again':
        continue;
      case 'refuse-recorded-mined':
        throw new VoidRefusedError(`${describe(row)} mined (tx ${current.minedTxHash}); there is nothing to void`);
      case 'void': {
        const sibling = await minedSibling(ctx, current);
        return markVoided(ctx.db, current, sibling ? `${reason} (its nonce was used by intent #${sibling.id} (${sibling.step}))` : reason);
      }
    }
  }
}
