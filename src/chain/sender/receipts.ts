import type { Db } from '../../db/client.ts';
import { type Hex, type PublicClient, type TransactionReceipt, TransactionReceiptNotFoundError } from 'viem';
import { type Intent, markMined, nonceSiblings } from '../intentStore.ts';
import { publicClient, type SenderContext } from './context.ts';

/**
 * The transaction's receipt, or null when the node has none (not mined, as far as that node knows). Any other
 * failure of the RPC is thrown, so the caller's retry looks again: an unreachable node never reads as "not mined".
 */
export async function receiptOrNull(client: PublicClient, hash: Hex): Promise<TransactionReceipt | null> {
  try {
    return await client.getTransactionReceipt({ hash });
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return null;
    throw error;
  }
}

/** The attempt of the intent that a node has a receipt for, latest attempt first. RPC failures are thrown, never read as "not mined". */
export async function minedAttempt(ctx: SenderContext, row: Intent): Promise<TransactionReceipt | null> {
  for (const hash of [row.txHash, ...row.earlierTxHashes] as Hex[]) {
    const receipt = await receiptOrNull(publicClient(ctx, row.chainId), hash);
    if (receipt) return receipt;
  }
  return null;
}

/** Records an attempt as mined; the status follows the row as it is now (see markMined), never this copy of it. */
export async function recordMined(ctx: SenderContext, row: Intent, hash: string, handle: Db = ctx.db): Promise<Intent> {
  return (await markMined(handle, row.id, hash)) ?? row;
}

/** Another intent of ours at the same nonce whose transaction mined (recorded as mined once found). */
export async function minedSibling(ctx: SenderContext, row: Intent): Promise<Intent | null> {
  for (const sibling of await nonceSiblings(ctx.db, row)) {
    const receipt = await minedAttempt(ctx, sibling);
    if (receipt) return recordMined(ctx, sibling, receipt.transactionHash);
  }
  return null;
}
