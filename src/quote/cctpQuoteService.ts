import { AmountError, formatAmount, parseAmount } from '../money/amount.ts';
import { poolFee, serviceFee, unitsToUsd, type FeePolicy } from '../money/fees.ts';
import type { BridgeChain, BridgeToken } from '../providers/bridge.ts';
import type { CctpChainConfig } from '../providers/cctp/chains.ts';
import type { BurnAndMintBridge } from '../providers/cctp/types.ts';
import type { PrivacyPool } from '../providers/privacyPool.ts';
import { QuoteError, type QuoteService } from './quoteService.ts';

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
 *   service fee = max(FEE_BPS of amount, FEE_MIN_USD, bridge-in fee)   (it covers the bridge-in)
 *   privacyFeeAmount = the pool's real cost: vetting fee + relay fee on the withdrawal
 *   burned on the way out = withdrawn - relay fee
 *   bridgeFeeAmount = Circle's fee on that burn (ceil(burn * minimumFee bps / 10000)); 0 when the hub is the destination
 *   quotedOutputAmount = amount - feeAmount - privacyFeeAmount - bridgeFeeAmount
 * The service's fees round up; the pool's round down, as its contracts compute them.
 */
export function createCctpQuoteService(deps: CctpQuoteServiceDeps): QuoteService {
  const chains = () => deps.bridge.chains().filter((c) => deps.enabledChainIds.includes(c.chainId));
  const chainById = (chainId: number, field: string) => {
    const chain = chains().find((c) => c.chainId === chainId);
    if (!chain) throw new QuoteError(`${field} ${chainId} is not a supported chain of the burn-and-mint network (see GET /api/bridge/chains)`);
    return chain;
  };
  const requireUsdc = (symbol: string | undefined, field: string) => {
    if (symbol !== undefined && symbol.toUpperCase() !== 'USDC') {
      throw new QuoteError(`${field} "${symbol}" is not supported: burn-and-mint mode moves USDC only`);
    }
  };

  return {
    async chains(): Promise<BridgeChain[]> {
      return chains().map((c) => ({ chainId: c.chainId, name: c.name, displayName: c.displayName, vmType: 'evm' }));
    },

    async tokens(chainId, search) {
      const token = usdcToken(chainById(chainId, 'chainId'));
      const term = search?.trim().toLowerCase();
      return !term || token.symbol.toLowerCase().includes(term) || token.name.toLowerCase().includes(term) ? [token] : [];
    },

    async quote(request) {
      requireUsdc(request.tokenSymbol, 'tokenSymbol');
      requireUsdc(request.destTokenSymbol, 'destTokenSymbol');
      const source = chainById(request.sourceChainId, 'sourceChainId');
      const destination = chainById(request.destChainId, 'destChainId');
      const hub = chainById(deps.hubChainId, 'hub chain');
      if (source.chainId === destination.chainId) throw new QuoteError('sourceChainId and destChainId must differ');

      let amount: bigint;
      try {
        amount = parseAmount(request.amount, USDC_DECIMALS);
      } catch (error) {
        if (error instanceof AmountError) throw new QuoteError(error.message);
        throw error;
      }

      const fees = await deps.pool.fees(hub.usdc);
      const bridgeInFee = source.chainId === hub.chainId ? 0n : (await deps.bridge.estimateFee(source.chainId, hub.chainId, amount)).fee;
      if (amount - bridgeInFee < fees.minimumDeposit) {
        throw new QuoteError(
          `amount ${request.amount} USDC is too small: the privacy pool takes deposits of at least ${formatAmount(fees.minimumDeposit, USDC_DECIMALS)} USDC`,
        );
      }
      const vettingFee = poolFee(amount - bridgeInFee, fees.depositFeeBps);

      const ruleFee = serviceFee(amount, deps.feePolicy, USDC_USD, USDC_DECIMALS);
      const fee = ruleFee > bridgeInFee ? ruleFee : bridgeInFee;
      const withdrawn = amount - fee - vettingFee;
      const relayFee = poolFee(withdrawn, fees.withdrawalFeeBps);
      const privacyFee = vettingFee + relayFee;
      const burned = withdrawn - relayFee;
      if (burned <= 0n)
        throw new QuoteError(`amount ${request.amount} USDC is too small: the fees exceed the output (minimum fee ${deps.feePolicy.feeMinUsd} USD)`);
      const bridgeFee = destination.chainId === hub.chainId ? 0n : (await deps.bridge.estimateFee(hub.chainId, destination.chainId, burned)).fee;
      const output = burned - bridgeFee;
      if (output <= 0n) throw new QuoteError(`amount ${request.amount} USDC is too small: the fees exceed the output`);

      const legs = (source.chainId === hub.chainId ? 0 : 1) + (destination.chainId === hub.chainId ? 0 : 1);
      const usd = (units: bigint) => unitsToUsd(units, USDC_DECIMALS, USDC_USD);
      return {
        sourceToken: usdcToken(source),
        hubToken: usdcToken(hub),
        destToken: usdcToken(destination),
        quote: {
          symbol: 'USDC',
          destSymbol: 'USDC',
          sourceChainId: source.chainId,
          destChainId: destination.chainId,
          hubChainId: hub.chainId,
          amount: amount.toString(),
          quotedOutputAmount: output.toString(),
          feeAmount: fee.toString(),
          bridgeFeeAmount: bridgeFee.toString(),
          privacyFeeAmount: privacyFee.toString(),
          amountInUsd: usd(amount),
          quotedOutputUsd: usd(output),
          feeUsd: usd(fee),
          bridgeFeeUsd: usd(bridgeFee),
          privacyFeeUsd: usd(privacyFee),
          etaSeconds: legs * LEG_ETA_SECONDS[deps.finality] + deps.poolEtaSeconds,
          route: [`USDC on ${source.displayName}`, `USDC on ${hub.displayName}`, `Privacy pool on ${hub.displayName}`, `USDC on ${destination.displayName}`],
        },
      };
    },
  };
}
