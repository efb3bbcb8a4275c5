/**
 * What one route's own transactions cost now, in USD: the gas budgets of src/quote/gasCost.ts at each chain's live
 * fee per gas (the most the sender would offer now, src/chain/fees.ts) and the
 * native currency's USD price. Fees and prices are cached for a few seconds; a chain that cannot be priced refuses
 * the quote rather than quote a route that could cost more than it earns.
 */
import type { ChainClients } from '../chain/clients.ts';
import { feeCap, offeredFees } from '../chain/fees.ts';
import { createTtlCache } from '../providers/ttlCache.ts';
import { gasCostUsd, routeGas, type BridgeMode, type ChainGas, type NetworkCosts } from './gasCost.ts';
import { QuoteError } from './quoteService.ts';

export interface NetworkCostDeps {
  mode: BridgeMode;
  chains: ChainClients;
  /** USD per whole unit of a chain's native currency (decimal string), or null when no price is known. */
  nativeUsd(chainId: number): Promise<string | null>;
  /** Headroom on the cost for fees that rise while a route runs (GAS_COST_BUFFER_BPS). */
  bufferBps: number;
  /** How long a chain's fee per gas is reused. */
  cacheMs?: number;
}

export function createNetworkCosts(deps: NetworkCostDeps): NetworkCosts {
  const fees = createTtlCache<bigint>({ ttlMs: deps.cacheMs ?? 5_000 });
  const prices = createTtlCache<string | null>({ ttlMs: deps.cacheMs ?? 5_000 });

  const feePerGas = (chainId: number) =>
    fees.get(String(chainId), async () => feeCap(await offeredFees(deps.chains.publicClient(chainId), deps.chains.chain(chainId))));

  return {
    async routeCostUsd(route) {
      const gas = routeGas(deps.mode, { sourceIsHub: route.sourceChainId === route.hubChainId, destinationIsHub: route.destChainId === route.hubChainId });
      const parts: Array<[number, bigint]> = [
        [route.sourceChainId, gas.source],
        [route.hubChainId, gas.hub],
        [route.destChainId, gas.destination],
      ];
      const chains: ChainGas[] = await Promise.all(
        parts
          .filter(([, units]) => units > 0n)
          .map(async ([chainId, units]) => {
            const [fee, usd] = await Promise.all([feePerGas(chainId), prices.get(String(chainId), () => deps.nativeUsd(chainId))]);
            if (usd === null)
              throw new QuoteError(`no USD price for the native currency of chain ${chainId}: the service's gas on it cannot be quoted`, { code: 'NO_ROUTE' });
            return { gas: units, feePerGas: fee, nativeUsd: usd };
          }),
      );
      return gasCostUsd(chains, deps.bufferBps);
    },
  };
}
