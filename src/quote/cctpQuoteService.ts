import { AmountError, formatAmount } from '../money/amount.ts';
import { poolFee, serviceFee, unitsToUsd, usdToTokenUnits, type FeePolicy } from '../money/fees.ts';
import { BridgeRouteError, type BridgeChain, type BridgeToken } from '../providers/bridge.ts';
import type { CctpChainConfig } from '../providers/cctp/chains.ts';
import type { BurnAndMintBridge } from '../providers/cctp/types.ts';
import type { PrivacyPool } from '../providers/privacyPool.ts';

type PoolFees = Awaited<ReturnType<PrivacyPool['fees']>>;
import type { NetworkCosts } from './gasCost.ts';
import {
  classOutput,
  DEST_TOKEN_FIELDS,
  QuoteError,
  type QuoteErrorDetails,
  type QuoteService,
  quotedToken,
  requestedAmount,
  requestedTokens,
  SOURCE_TOKEN_FIELDS,
} from './quoteService.ts';
import { matchesTokenSearch, pickToken, type TokenChoice, type TokenFields } from './tokenChoice.ts';

const USDC_DECIMALS = 6;
/** USDC is priced at 1 USD in this mode; the minimum fee and the USD figures use that. */
const USDC_USD = '1';
/** Rough time per burn-and-mint leg: Circle's fast transfers attest in seconds, standard ones wait for finality. */
const LEG_ETA_SECONDS = { fast: 20, standard: 19 * 60 } as const;

export interface CctpQuoteServiceDeps {
  bridge: BurnAndMintBridge;
  pool: PrivacyPool;
  hubChainId: number;
  /** Chains this deployment serves (those with an RPC URL). */
  enabledChainIds: number[];
  feePolicy: FeePolicy;
  /** The service's own gas per route at live fees (src/quote/networkCost.ts): part of the fee's floor. */
  networkCosts: NetworkCosts;
  poolEtaSeconds: number;
  finality: 'fast' | 'standard';
}

const usdcToken = (chain: CctpChainConfig): BridgeToken => ({
  chainId: chain.chainId,
  address: chain.usdc,
  symbol: 'USDC',
  name: 'USD Coin',
  decimals: USDC_DECIMALS,
});

/**
 * Quotes in burn-and-mint mode (USDC only), with exact bigint math along the path:
 *   amount -burn/mint-> hub (bridge-in fee) -pool deposit (vetting) fee-> note; withdrawn = amount - service fee - vetting fee
 *   service fee = max(FEE_BPS of amount, FEE_MIN_USD + the route's own gas at live fees, bridge-in fee + that gas)
 *   (it covers the bridge-in and the gas)
 *   privacyFeeAmount = the pool's real cost: vetting fee + relay fee on the withdrawal
 *   burned on the way out = withdrawn - relay fee
 *   bridgeFeeAmount = Circle's fee on that burn (ceil(burn * minimumFee bps / 10000)); 0 when the hub is the destination
 *   quotedOutputAmount = amount - feeAmount - privacyFeeAmount - bridgeFeeAmount - roundingAmount, where the rounding
 *   brings the output down to its amount class (src/privacy/amountClass.ts) and stays with the service
 * The service's fees round up; the pool's round down, as its contracts compute them. USDC is priced at 1 USD: no
 * price epoch is involved.
 */
export function createCctpQuoteService(deps: CctpQuoteServiceDeps): QuoteService {
  const chains = () => deps.bridge.chains().filter((c) => deps.enabledChainIds.includes(c.chainId));
  const chainById = (chainId: number, field: string) => {
    const chain = chains().find((c) => c.chainId === chainId);
    if (!chain)
      throw new QuoteError(`${field} ${chainId} is not a supported chain of the burn-and-mint network (see GET /api/bridge/chains)`, {
        code: 'UNSUPPORTED_CHAIN',
      });
    return chain;
  };
  /** The chain's USDC, the one token this mode moves, if `choice` names it (by symbol, address or both). */
  const requireUsdc = (chain: CctpChainConfig, choice: TokenChoice, fields: TokenFields) => {
    const picked = pickToken([usdcToken(chain)], choice, fields, chain);
    if ('problem' in picked) {
      const onlyUsdc = picked.problem.code === 'UNSUPPORTED_TOKEN' ? `; burn-and-mint mode moves USDC only (${chain.usdc})` : '';
      throw new QuoteError(`${picked.problem.message}${onlyUsdc}`, { code: picked.problem.code });
    }
  };

  /** The request's chains and amount. */
  const resolve = (request: Parameters<QuoteService['quote']>[0]) => {
    const source = chainById(request.sourceChainId, 'sourceChainId');
    const destination = chainById(request.destChainId, 'destChainId');
    const hub = chainById(deps.hubChainId, 'hub chain');
    const named = requestedTokens(request);
    requireUsdc(source, named.source, SOURCE_TOKEN_FIELDS);
    requireUsdc(destination, named.destSameAsSource ? { symbol: 'USDC' } : named.dest, DEST_TOKEN_FIELDS);
    if (source.chainId === destination.chainId) throw new QuoteError('sourceChainId and destChainId must differ', { code: 'UNSUPPORTED_PAIR' });
    try {
      return { source, destination, hub, amount: requestedAmount(request, USDC_DECIMALS) };
    } catch (error) {
      if (error instanceof AmountError) throw new QuoteError(error.message, { code: 'INVALID_AMOUNT' });
      throw error;
    }
  };

  /** Every amount along the path of `amount`, before the output is rounded to its class (the formulas above). */
  async function pathOf(
    route: { source: CctpChainConfig; hub: CctpChainConfig; destination: CctpChainConfig },
    amount: bigint,
    fees: PoolFees,
    networkCost: bigint,
  ) {
    const { source, hub, destination } = route;
    const bridgeInFee = source.chainId === hub.chainId ? 0n : (await deps.bridge.estimateFee(source.chainId, hub.chainId, amount)).fee;
    const vettingFee = poolFee(amount - bridgeInFee, fees.depositFeeBps);
    const ruleFee = serviceFee(amount, deps.feePolicy, USDC_USD, USDC_DECIMALS, networkCost);
    // The fee pays the bridge-in's fee, and the route's gas on top of it.
    const fee = ruleFee > bridgeInFee + networkCost ? ruleFee : bridgeInFee + networkCost;
    const withdrawn = amount - fee - vettingFee;
    const relayFee = poolFee(withdrawn, fees.withdrawalFeeBps);
    const burned = withdrawn - relayFee;
    const bridgeFee = destination.chainId === hub.chainId || burned <= 0n ? 0n : (await deps.bridge.estimateFee(hub.chainId, destination.chainId, burned)).fee;
    return { minimumDeposit: fees.minimumDeposit, bridgeInFee, fee, privacyFee: vettingFee + relayFee, burned, bridgeFee, output: burned - bridgeFee };
  }

  /** The route's own gas in USDC units (USDC is priced at 1 USD in this mode). */
  const networkCostOf = async (route: { source: CctpChainConfig; hub: CctpChainConfig; destination: CctpChainConfig }) =>
    usdToTokenUnits(
      await deps.networkCosts.routeCostUsd({ sourceChainId: route.source.chainId, hubChainId: route.hub.chainId, destChainId: route.destination.chainId }),
      USDC_USD,
      USDC_DECIMALS,
    );

  return {
    async chains(): Promise<BridgeChain[]> {
      return chains().map((c) => ({ chainId: c.chainId, name: c.name, displayName: c.displayName, vmType: 'evm' }));
    },

    async tokens(chainId, search) {
      const token = usdcToken(chainById(chainId, 'chainId'));
      return matchesTokenSearch(token, search) ? [token] : [];
    },

    async quote(request) {
      const route = resolve(request);
      const { source, destination, hub, amount } = route;
      const [fees, networkCost] = await Promise.all([deps.pool.fees(hub.usdc), networkCostOf(route)]);
      const path = await pathOf(route, amount, fees, networkCost);
      const tooSmall: QuoteErrorDetails = { code: 'INVALID_AMOUNT', limit: 'min', sourceToken: usdcToken(source) };
      const asked = formatAmount(amount, USDC_DECIMALS);
      if (amount - path.bridgeInFee < path.minimumDeposit) {
        throw new QuoteError(
          `amount ${asked} USDC is too small: the privacy pool takes deposits of at least ${formatAmount(path.minimumDeposit, USDC_DECIMALS)} USDC`,
          tooSmall,
        );
      }
      if (path.burned <= 0n)
        throw new QuoteError(
          `amount ${asked} USDC is too small: the fees exceed the output (minimum fee ${deps.feePolicy.feeMinUsd} USD plus ${formatAmount(networkCost, USDC_DECIMALS)} USD of network fees at current gas prices)`,
          tooSmall,
        );
      if (path.output <= 0n) throw new QuoteError(`amount ${asked} USDC is too small: the fees exceed the output`, tooSmall);
      const { fee, privacyFee, bridgeFee } = path;
      const { output, rounding, roundingBps } = classOutput(path.output);

      const legs = (source.chainId === hub.chainId ? 0 : 1) + (destination.chainId === hub.chainId ? 0 : 1);
      const usd = (units: bigint) => unitsToUsd(units, USDC_DECIMALS, USDC_USD);
      return {
        sourceToken: usdcToken(source),
        hubToken: usdcToken(hub),
        destToken: usdcToken(destination),
        quote: {
          symbol: 'USDC',
          destSymbol: 'USDC',
          sourceToken: quotedToken(usdcToken(source)),
          destToken: quotedToken(usdcToken(destination)),
          sourceChainId: source.chainId,
          destChainId: destination.chainId,
          hubChainId: hub.chainId,
          amount: amount.toString(),
          quotedOutputAmount: output.toString(),
          feeAmount: fee.toString(),
          networkCostAmount: networkCost.toString(),
          bridgeFeeAmount: bridgeFee.toString(),
          privacyFeeAmount: privacyFee.toString(),
          amountInUsd: usd(amount),
          quotedOutputUsd: usd(output),
          feeUsd: usd(fee),
          networkCostUsd: usd(networkCost),
          bridgeFeeUsd: usd(bridgeFee),
          privacyFeeUsd: usd(privacyFee),
          roundingAmount: rounding.toString(),
          roundingUsd: usd(rounding),
          etaSeconds: legs * LEG_ETA_SECONDS[deps.finality] + deps.poolEtaSeconds,
          route: [`USDC on ${source.displayName}`, `USDC on ${hub.displayName}`, `Privacy pool on ${hub.displayName}`, `USDC on ${destination.displayName}`],
          amountClass: { value: output.toString(), roundingBps, priceHeldUntil: null },
        },
      };
    },

    async inputFor(request, output) {
      const route = resolve({ ...request, amount: '1', amountSmallestUnits: undefined });
      const [fees, networkCost] = await Promise.all([deps.pool.fees(route.hub.usdc), networkCostOf(route)]);
      // The path's output never falls by more than a unit or two as the amount grows: a binary search for the first
      // amount that reaches `output`, then a step back over any such dip. Iris's fees are cached: no request per step.
      const reaches = async (amount: bigint) => {
        try {
          const path = await pathOf(route, amount, fees, networkCost);
          return amount - path.bridgeInFee >= path.minimumDeposit && path.burned > 0n && path.output >= output;
        } catch (error) {
          if (error instanceof BridgeRouteError) return false;
          throw error;
        }
      };
      let low = 0n;
      let high = output > 0n ? output * 2n + 10n ** BigInt(USDC_DECIMALS + 1) : 1n;
      if (!(await reaches(high))) throw new QuoteError(`no amount pays ${output} USDC units`, { code: 'INVALID_REQUEST' });
      while (high - low > 1n) {
        const middle = (low + high) / 2n;
        if (await reaches(middle)) high = middle;
        else low = middle;
      }
      while (high > 1n && (await reaches(high - 1n))) high -= 1n;
      return high;
    },
  };
}
