import type { Address, Hex } from 'viem';
import { type Intent, intentById, pendingFrom } from '../intentStore.ts';
import { type SenderContext, usedNonces } from './context.ts';
import { stepTransactionMove } from './decide.ts';
import { minedAttempt } from './receipts.ts';
import { stepIntent } from './stepIntent.ts';

/** `TxSender.intent`: the hash of the step's recorded transaction, the attempt that mined once known. */
export async function stepTransaction(ctx: SenderContext, routeId: string, step: string): Promise<{ txHash: Hex } | null> {
  const row = await stepIntent(ctx, routeId, step);
  let move = stepTransactionMove(row);
  if (move.kind === 'look-for-mined-attempt' && row) move = stepTransactionMove(row, (await minedAttempt(ctx, row))?.transactionHash ?? null);
  return move.kind === 'hash' ? { txHash: move.txHash as Hex } : null;
}

/** `IntentControl.get`: one intent by id, live or voided. */
export const intentRecord = (ctx: SenderContext, id: number): Promise<Intent | null> => intentById(ctx.db, id);

/** `IntentControl.queue`: the sender's live intents the chain has not mined yet, in nonce order. */
export async function senderQueue(ctx: SenderContext, chainId: number, from: Address): Promise<Intent[]> {
  const used = await usedNonces(ctx, { chainId, fromAddress: from });
  return pendingFrom(ctx.db, { chainId, fromAddress: from }, used);
}
