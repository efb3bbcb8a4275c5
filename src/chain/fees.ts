/**
 * The fees the service offers for a transaction now, on one chain: what the sender signs new transactions with, what a
 * per-route account's top-up is sized by, what the quotes charge for gas and what the hot-wallet gauges spend. One
 * policy for all four, so that a top-up always covers the transactions it pays for and a quote covers what is sent.
 *
 * It is viem's estimate: the latest base fee with 20 % headroom plus the node's suggested tip (EIP-1559), or the
 * node's gas price where the chain has no base fee. A transaction that does not mine at it is replaced with higher
 * fees by the sender (`bumpedFees` in src/chain/sender/decide.ts). The sender sets these fees on the prepared transaction itself: viem's
 * preparation asks the node to fill the transaction (eth_fillTransaction) and would otherwise sign the node's fees
 * (anvil's: twice the base fee plus a 1 gwei tip), which need not match any estimate made elsewhere.
 */
import type { Chain, PublicClient } from 'viem';

export type OfferedFees = { type: 'eip1559'; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | { type: 'legacy'; gasPrice: bigint };

export async function offeredFees(client: PublicClient, chain: Chain): Promise<OfferedFees> {
  const block = await client.getBlock();
  if (typeof block.baseFeePerGas !== 'bigint') return { type: 'legacy', gasPrice: (await client.estimateFeesPerGas({ chain, type: 'legacy' })).gasPrice };
  const { maxFeePerGas, maxPriorityFeePerGas } = await client.estimateFeesPerGas({ chain, type: 'eip1559' });
  return { type: 'eip1559', maxFeePerGas, maxPriorityFeePerGas };
}

/** The most one unit of gas can cost at these fees. */
export const feeCap = (fees: OfferedFees): bigint => (fees.type === 'eip1559' ? fees.maxFeePerGas : fees.gasPrice);

/** A fee ceiling given in gwei (a decimal like "2.5") as wei per gas. */
export function gweiToWei(gwei: string): bigint {
  const [whole = '0', fraction = ''] = gwei.split('.');
  return BigInt(whole) * 10n ** 9n + BigInt(fraction.padEnd(9, '0').slice(0, 9) || '0');
}

/** Whether fees offered now exceed a chain's ceiling (wei per gas; none: never). */
export const aboveCeiling = (fees: OfferedFees, ceilingWei: bigint | undefined): boolean => ceilingWei !== undefined && feeCap(fees) > ceilingWei;
