import { and, eq, isNotNull } from 'drizzle-orm';
import { getAddress, type Address, type Hex } from 'viem';
import { txIntents } from '../src/db/schema.ts';
import type { ActivityDeps } from './deps.ts';

/**
 * A native-currency route's deposit address holds two kinds of ETH: the user's (the deposit, then any stray) and what
 * is left of the gas the service topped up (the top-ups, less the fees of the address's own transactions). Only the
 * user's is refunded or counted as a stray. Both parts follow from the route's own mined transactions:
 *   the user's = balance − (Σ top-ups − Σ fees paid by the address), never below zero.
 */
export function nativeUserFunds(balance: bigint, moves: { topUps: bigint[]; fees: bigint[] }): bigint {
  const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);
  const gasLeft = sum(moves.topUps) - sum(moves.fees);
  const user = balance - (gasLeft > 0n ? gasLeft : 0n);
  return user > 0n ? user : 0n;
}

/** The top-ups into `address` and the fees it paid, from the route's mined transactions on `chainId` (tx_intents). */
export async function serviceMovesOf(deps: ActivityDeps, routeId: string, chainId: number, address: Address): Promise<{ topUps: bigint[]; fees: bigint[] }> {
  const rows = await deps.db
    .select({ hash: txIntents.minedTxHash })
    .from(txIntents)
    .where(and(eq(txIntents.routeId, routeId), eq(txIntents.chainId, chainId), isNotNull(txIntents.minedTxHash)));
  const client = deps.chains.publicClient(chainId);
  const moves = { topUps: [] as bigint[], fees: [] as bigint[] };
  for (const { hash } of rows) {
    const [tx, receipt] = await Promise.all([client.getTransaction({ hash: hash as Hex }), client.getTransactionReceipt({ hash: hash as Hex })]);
    if (getAddress(tx.from) === getAddress(address)) {
      // An OP-stack chain charges an L1 data fee on top of the execution fee.
      const l1Fee = (receipt as { l1Fee?: bigint | null }).l1Fee ?? 0n;
      moves.fees.push(receipt.gasUsed * receipt.effectiveGasPrice + l1Fee);
    } else if (tx.to && getAddress(tx.to) === getAddress(address)) moves.topUps.push(tx.value);
  }
  return moves;
}

/** The user's ETH at a native route's deposit address now (see nativeUserFunds). */
export async function nativeUserBalance(deps: ActivityDeps, route: { routeId: string; sourceChainId: number; depositAddress: string }): Promise<bigint> {
  const address = route.depositAddress as Address;
  const [balance, moves] = await Promise.all([
    deps.chains.publicClient(route.sourceChainId).getBalance({ address }),
    serviceMovesOf(deps, route.routeId, route.sourceChainId, address),
  ]);
  return nativeUserFunds(balance, moves);
}
