import type { Hex, LocalAccount } from 'viem';
import { crashPoint } from '../../temporal/crashPoints.ts';
import { describe, type Intent, intentById, lockSender, pendingFrom } from '../intentStore.ts';
import { publicClient, type SenderContext, usedNonces } from './context.ts';
import { afterBroadcast, type BroadcastOutcome, broadcastMove, classifyBroadcastError, replacementSigned } from './decide.ts';
import { SenderUnderfundedError, TransactionPendingError } from './errors.ts';
import { replace } from './replace.ts';

/**
 * Broadcasts the intent's latest attempt, under its sender's lock and only while its record says pending: a
 * voided intent is never broadcast (a void takes the same lock, so it never races a broadcast). Returns the row
 * as recorded, and 'underpriced' when the node wants higher fees.
 */
export async function broadcast(ctx: SenderContext, row: Intent): Promise<{ row: Intent; outcome: BroadcastOutcome }> {
  return ctx.db.transaction(async (tx) => {
    await lockSender(tx, row.chainId, row.fromAddress);
    const current = await intentById(tx, row.id);
    const recorded = current ?? row;
    const move = broadcastMove(current);
    if (move.kind === 'skip-voided') return { row: recorded, outcome: 'voided' as const };
    if (move.kind === 'skip-mined') return { row: recorded, outcome: 'sent' as const };
    crashPoint('tx:signed'); // drill: the attempt is recorded (written ahead), not yet broadcast
    try {
      await publicClient(ctx, recorded.chainId).sendRawTransaction({ serializedTransaction: recorded.rawTx as Hex });
      crashPoint('tx:broadcast'); // drill: broadcast, its outcome not yet recorded
      return { row: recorded, outcome: 'sent' as const };
    } catch (error) {
      const refusal = classifyBroadcastError(error instanceof Error ? error.message : '');
      if (refusal === 'sent' || refusal === 'underpriced') return { row: recorded, outcome: refusal };
      if (refusal === 'underfunded') {
        throw new SenderUnderfundedError(
          `${recorded.fromAddress} on chain ${recorded.chainId} cannot pay for ${describe(recorded)}: insufficient funds. Fund it; the send goes on by itself`,
        );
      }
      throw error;
    }
  });
}

/**
 * Broadcasts the intent, replacing it while the node rejects its fees (a base fee that rose since it was signed).
 * Returns the row as recorded: a voided one was not broadcast.
 */
export async function push(ctx: SenderContext, row: Intent, account: LocalAccount): Promise<Intent> {
  let current = row;
  for (let replacements = 0; ; replacements++) {
    const sent = await broadcast(ctx, current);
    current = sent.row;
    const move = afterBroadcast(sent.outcome, replacements);
    if (move.kind === 'done') return current;
    if (move.kind === 'give-up') throw new TransactionPendingError(`the node keeps rejecting the fees of ${describe(current)}; the next try raises them again`);
    const next = await replace(ctx, current, account);
    if (!replacementSigned(current, next)) return next;
    current = next;
  }
}

/** Intents of this sender that no node has (a crash before broadcast, or rejected): pushed in nonce order. */
export async function pushQueue(ctx: SenderContext, chainId: number, account: LocalAccount): Promise<void> {
  const pending = await usedNonces(ctx, { chainId, fromAddress: account.address }, 'pending');
  const unsent = await pendingFrom(ctx.db, { chainId, fromAddress: account.address }, pending);
  for (const row of unsent) await push(ctx, row, account);
}
