import type { Logger } from '../logger.ts';

/** How often the warning repeats while requests keep carrying the header. */
const REPEAT_MS = 60 * 60 * 1000;
/** Distinct forwarded addresses counted, at most (a count, not a record: nothing else is kept). */
const MAX_COUNTED = 10_000;

/**
 * Behind a load balancer with TRUST_PROXY_HOPS=0 every user is the proxy's address: one client for the abuse limits
 * (the whole service's) and for the anonymity sets (every route's set is 1, so every route waits its longest wait).
 * Nothing at start can know there is a proxy; the requests can: the first one carrying X-Forwarded-For, and then
 * hourly, log a warning with how many distinct forwarded clients were seen.
 */
export function createProxyHeaderWatch(logger: Pick<Logger, 'warn'>, now: () => number = Date.now) {
  const seen = new Set<string>();
  let warnedAt: number | undefined;
  return {
    /** One request's X-Forwarded-For header (undefined: none), under TRUST_PROXY_HOPS=0. */
    observe(forwardedFor: string | undefined): void {
      const first = forwardedFor?.split(',')[0]?.trim();
      if (!first) return;
      if (seen.size < MAX_COUNTED) seen.add(first);
      if (warnedAt !== undefined && now() - warnedAt < REPEAT_MS) return;
      warnedAt = now();
      logger.warn(
        'requests carry X-Forwarded-For but TRUST_PROXY_HOPS is 0: every user behind the proxy counts as one client (the abuse limits become the whole service\'s, and every anonymity set is 1). Set TRUST_PROXY_HOPS to the number of proxies in front of the API (docs/operations.md, "First deployment")',
        { distinctForwardedClients: seen.size },
      );
    },
  };
}
