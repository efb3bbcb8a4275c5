import { type Hex, type LocalAccount, parseTransaction, type TransactionSerializable } from 'viem';
import { describe, type Intent, lockSender, intentById, cancelPending, recordAttempt } from '../intentStore.ts';
import { publicClient, type SenderContext } from './context.ts';
import { bumpedFees, bumpedGasPrice, replaceMove } from './decide.ts';
import { TransactionPendingError } from './errors.ts';

/** The intent's latest transaction, with `change` applied and the fees of a replacement (`bumpedFees`: above its own, at least the chain's now). */
export async function bumpedTransaction(ctx: SenderContext, row: Intent, change: Partial<TransactionSerializable> = {}): Promise<TransactionSerializable> {
  const {
    r: _r,
    s: _s,
    v: _v,
    yParity: _y,
    ...tx
  } = parseTransaction(row.rawTx as Hex) as TransactionSerializable & { r?: Hex; s?: Hex; v?: bigint; yParity?: number };
  const client = publicClient(ctx, row.chainId);
  const chain = ctx.clients.chain(row.chainId);
  if (tx.type === 'eip1559') {
    const now = await client.estimateFeesPerGas({ chain, type: 'eip1559' });
    const last = { maxFeePerGas: tx.maxFeePerGas ?? 0n, maxPriorityFeePerGas: tx.maxPriorityFeePerGas ?? 0n };
    return { ...tx, ...change, ...bumpedFees(last, now) } as TransactionSerializable;
  }
  const now = await client.estimateFeesPerGas({ chain, type: 'legacy' });
  return { ...tx, ...change, gasPrice: bumpedGasPrice(tx.gasPrice ?? 0n, now.gasPrice) } as TransactionSerializable;
}

/**
 * Records a new attempt of the intent at the same nonce with higher fees; the caller broadcasts it. Returns the
 * intent unchanged when another process replaced it meanwhile, when it is settled, or when a cancel supersedes it.
 */
export async function replace(ctx: SenderContext, row: Intent, account: LocalAccount): Promise<Intent> {
  return ctx.db.transaction(async (tx) => {
    await lockSender(tx, row.chainId, row.fromAddress);
    const current = await intentById(tx, row.id);
    let move = replaceMove({ current, seenAttempt: row.attempt });
    if (move.kind === 'look-for-cancel') move = replaceMove({ current, seenAttempt: row.attempt, cancelPending: await cancelPending(tx, row) });
    if (move.kind === 'keep' || !current) return current ?? row;
    if (move.kind === 'refuse-max-attempts') {
      throw new TransactionPendingError(`${describe(current)} is not mined after ${current.attempt} attempts with rising fees; see routectl senders`);
    }
    const rawTx = await account.signTransaction(await bumpedTransaction(ctx, current));
    return recordAttempt(tx, current, rawTx);
  });
}
