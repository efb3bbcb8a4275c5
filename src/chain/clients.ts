import { createPublicClient, defineChain, http, type Chain, type PublicClient } from 'viem';
import { rpcRequests } from '../observability/metrics.ts';

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
          transport: http(undefined, { retryCount: 2, timeout: 15_000, fetchFn: countingFetch(chainId) }),
          pollingInterval: opts.pollingIntervalMs ?? 1000,
          // viem would otherwise answer getBlockNumber from a cache up to a polling interval old, shared by every
          // caller: a deposit watcher or pool scan reading "the head" right after a transaction was mined could
          // stop one block short of it.
          cacheTime: 0,
        }) as PublicClient;
        clients.set(chainId, client);
      }
      return client;
    },
  };
}

/**
 * fetch that counts each JSON-RPC call of the request body (single or batch) in
 * `private_route_rpc_requests_total{chain_id, method}` before sending it. Retries are counted too: they are calls.
 */
function countingFetch(chainId: number): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  const chain_id = String(chainId);
  return (input, init) => {
    for (const method of rpcMethods(init?.body)) rpcRequests.inc({ chain_id, method });
    return fetch(input, init);
  };
}

/** The JSON-RPC method names in a request body viem built (a JSON string); none if it is not one. */
export function rpcMethods(body: unknown): string[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    return (Array.isArray(parsed) ? parsed : [parsed]).map((call) => {
      const method = (call as { method?: unknown } | null)?.method;
      return typeof method === 'string' ? method : 'unknown';
    });
  } catch {
    return ['unknown'];
  }
}
