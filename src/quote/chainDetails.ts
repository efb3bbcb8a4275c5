import type { BridgeChain } from '../providers/bridge.ts';
import type { ChainInfo } from '../networks/profiles.ts';
import type { QuoteService } from './quoteService.ts';

/**
 * The quote service with each chain's explorer and native currency filled in from the network profile (NETWORK)
 * where the bridge provider gives none: Relay's catalogue names both; Circle's CCTP tables neither.
 */
export function withChainDetails(service: QuoteService, known: readonly ChainInfo[]): QuoteService {
  const byId = new Map(known.map((chain) => [chain.chainId, chain]));
  return {
    ...service,
    async chains(): Promise<BridgeChain[]> {
      return (await service.chains()).map((chain) => {
        const profile = byId.get(chain.chainId);
        return {
          ...chain,
          explorerUrl: chain.explorerUrl ?? profile?.explorerUrl,
          nativeCurrency: chain.nativeCurrency ?? profile?.nativeCurrency,
        };
      });
    },
  };
}

/** A transaction's page on its chain's explorer, or null where the chain has none (the local chains) or the hash is unknown. */
export function explorerTxUrl(explorerUrl: string | undefined, hash: string | null): string | null {
  return explorerUrl && hash ? `${explorerUrl.replace(/\/+$/, '')}/tx/${hash}` : null;
}
