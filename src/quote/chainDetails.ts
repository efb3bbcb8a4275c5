import type { ChainInfo } from '../networks/profiles.ts';
import type { BridgeChain } from '../providers/bridge.ts';
import type { QuoteService } from './quoteService.ts';

/**
 * The quote service with each chain's explorer and native currency: the network profile (NETWORK) first, since we
 * chose those ourselves, then the bridge provider's catalogue (Relay names both; Circle's CCTP tables neither). A
 * provider's explorer that is not a plain https origin (and path) is dropped: it ends up in links a wallet opens.
 */
export function withChainDetails(service: QuoteService, known: readonly ChainInfo[]): QuoteService {
  const byId = new Map(known.map((chain) => [chain.chainId, chain]));
  return {
    ...service,
    async chains(): Promise<BridgeChain[]> {
      return (await service.chains()).map((chain) => {
        const profile = byId.get(chain.chainId);
        const explorerUrl = profile?.explorerUrl ?? safeExplorerUrl(chain.explorerUrl);
        const nativeCurrency = profile?.nativeCurrency ?? chain.nativeCurrency;
        const { explorerUrl: _, nativeCurrency: __, ...rest } = chain;
        return { ...rest, ...(explorerUrl && { explorerUrl }), ...(nativeCurrency && { nativeCurrency }) };
      });
    },
  };
}

/**
 * A provider's explorer address as links may carry it: https, no credentials, query or fragment, no trailing slash;
 * undefined for anything else (plain http included: a provider could name a host on the reader's own machine).
 */
export function safeExplorerUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:') return undefined;
  if (url.username || url.password || url.search || url.hash) return undefined;
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

const TX_HASH = /^0x[0-9a-f]{64}$/i;

/** A transaction's page on its chain's explorer, or null where the chain has none (the local chains) or the hash is unknown. */
export function explorerTxUrl(explorerUrl: string | undefined, hash: string | null): string | null {
  return explorerUrl && hash && TX_HASH.test(hash) ? `${explorerUrl}/tx/${hash}` : null;
}
