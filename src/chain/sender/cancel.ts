import type { Hex, LocalAccount } from 'viem';
import { describe, type Intent, intentById, lockSender, markVoided, recordIntent } from '../intentStore.ts';
import { publicClient, reload, type SenderContext, usedNonces } from './context.ts';
import { cancelMove } from './decide.ts';
import { IntentVoidedError, VoidRefusedError } from './errors.ts';
import { bumpedTransaction } from './replace.ts';
import { settle } from './settle.ts';
import { stepIntent } from './stepIntent.ts';

/**
 * `IntentControl.cancel`: replaces a pending intent with a 0-value self-send at its nonce, recorded first as the
 * intent of step `cancel:<id>` of the same route, waits for it, then voids the original.
 */
export async function cancel(ctx: SenderContext, id: number, account: LocalAccount): Promise<{ replaced: boolean; txHash: Hex }> {
  const original = await intentById(ctx.db, id);
  let move = cancelMove({ original });
  if (move.kind === 'refuse-not-pending' || !original)
    throw new VoidRefusedError(`intent #${id} is ${original?.status ?? 'unknown'}; there is nothing to cancel`);
  const step = `cancel:${id}`;
  const recorded = await stepIntent(ctx, original.routeId, step);
  move = cancelMove({ original, replacementRecorded: recorded !== null });
  if (move.kind === 'look-at-nonce') move = cancelMove({ original, replacementRecorded: false, usedNonce: await usedNonces(ctx, original) });
  if (move.kind === 'refuse-nonce-used') throw new VoidRefusedError(`the nonce of ${describe(original)} is already used; void it with \`routectl void ${id}\``);
  const replacement = recorded ?? (await recordCancel(ctx, original, step, account));
  try {
    const sent = await settle(ctx, replacement, account);
    await markVoided(ctx.db, original, `replaced by intent #${replacement.id} (a 0-value self-send at its nonce)`);
    return { replaced: true, txHash: sent.txHash };
  } catch (error) {
    if (!(error instanceof IntentVoidedError)) throw error;
    // Taken to mean the cancel can never mine because the original used its nonce first.
    const mined = await intentById(ctx.db, id);
    return { replaced: false, txHash: (mined?.minedTxHash ?? original.txHash) as Hex };
  }
}

/** Signs and records the cancel: a 0-value self-send at the original's nonce, with fees above every attempt of it. */
async function recordCancel(ctx: SenderContext, original: Intent, step: string, account: LocalAccount): Promise<Intent> {
  // Estimated, not 21,000: chains that charge L1 data in L2 gas want more for a plain transfer.
  const gas = await publicClient(ctx, original.chainId).estimateGas({ account: account.address, to: account.address, value: 0n });
  return ctx.db.transaction(async (tx) => {
    await lockSender(tx, original.chainId, original.fromAddress);
    const again = await stepIntent(ctx, original.routeId, step, tx);
    if (again) return again;
    const rawTx = await account.signTransaction(
      await bumpedTransaction(ctx, await reload(ctx, original), { to: account.address, value: 0n, data: undefined, gas }),
    );
    return recordIntent(tx, { routeId: original.routeId, step, chainId: original.chainId, fromAddress: original.fromAddress, nonce: original.nonce, rawTx });
  });
}
