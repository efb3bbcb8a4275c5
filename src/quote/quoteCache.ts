import { createTtlCache } from '../providers/ttlCache.ts';
import { pairKey, type QuoteService, type ResolvedQuote, type TransferRequest } from './quoteService.ts';

export interface QuoteCacheOptions {
  /** How long an identical request gets the same quote. 0 = no cache (concurrent identical requests still share one). */
  ttlMs: number;
  /** Distinct requests remembered at most. Default 1000. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * The quote service with identical requests of one client (`cacheScope`) answered from one computation for `ttlMs`
 * (QUOTE_CACHE_SECONDS), so a client polling for a quote costs the providers nothing more. Not shared between
 * clients: a quote answered from the cache comes back faster, and would tell whoever asks an exact (pair, amount) that
 * someone else asked it moments ago, just before a deposit of that amount (issue 33).
 * A quote holds no id, expiry or per-request field, so the same one can serve several callers; each gets
 * its own copy (with its amount advice, when the service gives some). Failures are not kept. `{ fresh: true }` (a create) always prices afresh.
 */
export function withQuoteCache(service: QuoteService, opts: QuoteCacheOptions): QuoteService {
  const cache = createTtlCache<ResolvedQuote>({ ttlMs: opts.ttlMs, maxEntries: opts.maxEntries, now: opts.now });
  return {
    chains: () => service.chains(),
    tokens: (chainId, search) => service.tokens(chainId, search),
    inputFor: (request, output) => service.inputFor(request, output),
    async quote(request, options) {
      if (options?.fresh) return service.quote(request, options);
      return structuredClone(await cache.get(quoteKey(request, options?.cacheScope), () => service.quote(request)));
    },
  };
}

/**
 * What the quote depends on, normalised only where the services treat spellings alike: symbols are
 * case-insensitive, addresses too, and default as the services default them. Other fields (a create's addresses) are ignored; the
 * scope keeps clients apart.
 * The amount is kept as sent: "1.50" and "1.5" are separate entries, never a valid and an invalid one merged.
 */
export function quoteKey(request: TransferRequest, scope?: string): string {
  return JSON.stringify([scope ?? null, pairKey(request), request.amount ?? null, request.amountSmallestUnits ?? null]);
}
