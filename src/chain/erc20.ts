import { encodeFunctionData, erc20Abi, zeroAddress, type Address, type Hex } from 'viem';
import type { ChainClients } from './clients.ts';

/** Relay's name for a chain's native currency (ETH), which the service moves as a token of that address. */
export const NATIVE_TOKEN: Address = zeroAddress;

export const isNativeToken = (token: string) => token.toLowerCase() === NATIVE_TOKEN;

/** `owner`'s balance of `token`: an ERC-20's balanceOf, or the native balance for NATIVE_TOKEN. */
export async function tokenBalance(clients: ChainClients, chainId: number, token: Address, owner: Address, blockNumber?: bigint): Promise<bigint> {
  const client = clients.publicClient(chainId);
  if (isNativeToken(token)) return client.getBalance({ address: owner, blockNumber });
  return client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner], blockNumber });
}

/**
 * The transaction that pays `amount` of `token` to `to` from the sending account: an ERC-20's transfer(), or the native
 * currency (NATIVE_TOKEN) as the transaction's value (how Relay's deposit step funds a native order, too).
 */
export function paymentCall(token: Address, to: Address, amount: bigint): { to: Address; data?: Hex; value?: bigint } {
  if (isNativeToken(token)) return { to, value: amount };
  return { to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }) };
}
