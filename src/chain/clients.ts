import { createPublicClient, defineChain, http, type Chain, type PublicClient } from 'viem';

/** viem public clients per chain id, created lazily from configured RPC URLs and reused. */
export interface ChainClients {
  publicClient(chainId: number): PublicClient;
  chain(chainId: number): Chain;
}

export function createChainClients(rpcUrls: Record<string, string>, opts: { pollingIntervalMs?: number } = {}): ChainClients {
  const chains = new Map<number, Chain>();
  const clients = new Map<number, PublicClient>();

  const chain = (chainId: number): Chain => {
    let found = chains.get(chainId);
    if (!found) {
      const url = rpcUrls[String(chainId)];
      if (!url) throw new Error(`no RPC URL configured for chain ${chainId}`);
      found = defineChain({
        id: chainId,
        name: `chain-${chainId}`,
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [url] } },
      });
      chains.set(chainId, found);
    }
    return found;
  };

  return {
    chain,
    publicClient(chainId) {
      let client = clients.get(chainId);
      if (!client) {
        client = createPublicClient({
          chain: chain(chainId),
          transport: http(undefined, { retryCount: 2, timeout: 15_000 }),
          pollingInterval: opts.pollingIntervalMs ?? 1000,
        }) as PublicClient;
        clients.set(chainId, client);
      }
      return client;
    },
  };
}
