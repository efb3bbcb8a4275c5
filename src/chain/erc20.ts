import { erc20Abi, type Address } from 'viem';
import type { ChainClients } from './clients.ts';

export async function tokenBalance(clients: ChainClients, chainId: number, token: Address, owner: Address): Promise<bigint> {
  return clients.publicClient(chainId).readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
}
