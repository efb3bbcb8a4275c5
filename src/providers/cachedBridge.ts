import type { DepositAddressBridge } from './bridge.ts';
import { createTtlCache, memoize } from './ttlCache.ts';

export interface BridgeCacheOptions {
  /** Chains and token lists: they change when the provider adds a chain or token. Default 5 minutes. */
  catalogTtlMs?: number;
  /** Token USD prices (the minimum fee and the USD figures of a quote). Default 30 s. */
  priceTtlMs?: number;
  now?: () => number;
}

export const DEFAULT_CATALOG_TTL_MS = 5 * 60_000;
export const DEFAULT_PRICE_TTL_MS = 30_000;

/**
 * The bridge with its catalogue (chains, tokens) and token prices cached per process, shared by the quotes,
 * the creates and the activities that read them. Quotes and order statuses are never cached here: they are
 * per amount and per order.
 */
export function withCatalogCache(bridge: DepositAddressBridge, opts: BridgeCacheOptions = {}): DepositAddressBridge {
  const catalogTtlMs = opts.catalogTtlMs ?? DEFAULT_CATALOG_TTL_MS;
  const chains = memoize(catalogTtlMs, () => bridge.listChains(), opts.now);
  const tokens = createTtlCache<Awaited<ReturnType<DepositAddressBridge['listTokens']>>>({ ttlMs: catalogTtlMs, now: opts.now });
  const prices = createTtlCache<string | null>({ ttlMs: opts.priceTtlMs ?? DEFAULT_PRICE_TTL_MS, now: opts.now });
  return {
    listChains: chains,
    listTokens: (chainId, search) => tokens.get(`${chainId}|${search ?? ''}`, () => bridge.listTokens(chainId, search)),
    tokenUsdPrice: (chainId, address) => prices.get(`${chainId}|${address.toLowerCase()}`, () => bridge.tokenUsdPrice(chainId, address)),
    quote: (request) => bridge.quote(request),
    orderStatus: (requestId) => bridge.orderStatus(requestId),
  };
}
