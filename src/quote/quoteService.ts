import type { Address } from 'viem';
import { AmountError, formatAmount, parseAmount } from '../money/amount.ts';
import { poolFee, serviceFee, unitsToUsd, type FeePolicy } from '../money/fees.ts';
import type { PrivacyPool } from '../providers/privacyPool.ts';
import type { BridgeChain, BridgeToken, DepositAddressBridge } from '../providers/bridge.ts';

export interface TransferRequest {
  sourceChainId: number;
  destChainId: number;
  amount: string;
  tokenSymbol?: string;
  destTokenSymbol?: string;
}

/** The request cannot be quoted as asked; the message says why. Maps to HTTP 400. */
export class QuoteError extends Error {
  override name = 'QuoteError';
}

export interface Quote {
  symbol: string;
  destSymbol: string;
  sourceChainId: number;
  destChainId: number;
  hubChainId: number;
  amount: string;
  quotedOutputAmount: string;
  feeAmount: string;
  bridgeFeeAmount: string;
  privacyFeeAmount: string;
  amountInUsd: number | null;
  quotedOutputUsd: number | null;
  feeUsd: number | null;
  bridgeFeeUsd: number | null;
  privacyFeeUsd: number | null;
  etaSeconds: number;
  route: string[];
}

/** A quote plus what the service needs to execute it (resolved tokens), kept off the wire. */
export interface ResolvedQuote {
  quote: Quote;
  sourceToken: BridgeToken;
  hubToken: BridgeToken;
  destToken: BridgeToken;
}

export interface QuoteServiceDeps {
  bridge: DepositAddressBridge;
  pool: PrivacyPool;
  hubChainId: number;
  hubTokenSymbol: string;
  feePolicy: FeePolicy;
  /** Expected time in the privacy pool (review, privacy delay, proof), part of etaSeconds. */
  poolEtaSeconds: number;
  /** Placeholder account for preview quotes (no deposit address is allocated for those). */
  previewAccount: Address;
}

export interface QuoteOptions {
  /** Price afresh even when an identical request was quoted moments ago (a create does). */
  fresh?: boolean;
}

export interface QuoteService {
  quote(request: TransferRequest, options?: QuoteOptions): Promise<ResolvedQuote>;
  chains(): Promise<BridgeChain[]>;
  tokens(chainId: number, search?: string): Promise<BridgeToken[]>;
}

/**
 * Prices a transfer along its real path, with exact bigint math at every hop:
 *   amount (source) -bridge in-> hub asset -pool deposit fee-> note -relay fee-> withdrawable -bridge out-> gross output
 *   service fee = max(FEE_BPS of gross output, FEE_MIN_USD in destination units)
 *   quotedOutputAmount = gross output - service fee
 * The bridge-out leg is later executed as EXACT_OUTPUT for quotedOutputAmount, so the service fee is also
 * the headroom that absorbs price movement between quote and payout.
 *
 * Each quote reads the chain and token lists and two prices: pass a bridge whose catalogue is cached
 * (withCatalogCache, as the runtime does) so that only the two bridge quotes reach the provider.
 */
export function createQuoteService(deps: QuoteServiceDeps): QuoteService {
  const chainList = () => deps.bridge.listChains();
  const allTokens = (chainId: number) => deps.bridge.listTokens(chainId);

  async function chainById(chainId: number, field: string): Promise<BridgeChain> {
    const chain = (await chainList()).find((c) => c.chainId === chainId);
    if (!chain) throw new QuoteError(`${field} ${chainId} is not a supported chain (see GET /api/bridge/chains)`);
    return chain;
  }

  async function tokenBySymbol(chain: BridgeChain, symbol: string, field: string): Promise<BridgeToken> {
    const token = (await allTokens(chain.chainId)).find((t) => t.symbol.toLowerCase() === symbol.toLowerCase());
    if (!token) throw new QuoteError(`${field} "${symbol}" is not supported on chain ${chain.chainId} (${chain.displayName})`);
    return token;
  }

  return {
    chains: chainList,

    async tokens(chainId, search) {
      await chainById(chainId, 'chainId');
      const tokens = await allTokens(chainId);
      const term = search?.trim().toLowerCase();
      return term ? tokens.filter((t) => t.symbol.toLowerCase().includes(term) || t.name.toLowerCase().includes(term)) : tokens;
    },

    async quote(request) {
      const symbol = request.tokenSymbol ?? 'USDC';
      const destSymbol = request.destTokenSymbol ?? symbol;
      const [sourceChain, destChain, hubChain] = await Promise.all([
        chainById(request.sourceChainId, 'sourceChainId'),
        chainById(request.destChainId, 'destChainId'),
        chainById(deps.hubChainId, 'hub chain'),
      ]);
      const [sourceToken, destToken, hubToken] = await Promise.all([
        tokenBySymbol(sourceChain, symbol, 'tokenSymbol'),
        tokenBySymbol(destChain, destSymbol, 'destTokenSymbol'),
        tokenBySymbol(hubChain, deps.hubTokenSymbol, 'hub token'),
      ]);
      if (sourceChain.chainId === hubChain.chainId || destChain.chainId === hubChain.chainId) {
        throw new QuoteError(`transfers from or to the hub chain ${hubChain.chainId} are not supported in deposit-address mode`);
      }

      let amount: bigint;
      try {
        amount = parseAmount(request.amount, sourceToken.decimals);
      } catch (error) {
        if (error instanceof AmountError) throw new QuoteError(error.message);
        throw error;
      }

      const preview = { user: deps.previewAccount, recipient: deps.previewAccount, refundTo: deps.previewAccount, useDepositAddress: false };
      const [bridgeIn, fees] = await Promise.all([
        deps.bridge.quote({
          ...preview,
          originChainId: sourceChain.chainId,
          destinationChainId: hubChain.chainId,
          originCurrency: sourceToken.address,
          destinationCurrency: hubToken.address,
          amount,
          tradeType: 'EXACT_INPUT',
        }),
        deps.pool.fees(hubToken.address),
      ]);
      if (bridgeIn.amountOut < fees.minimumDeposit) {
        throw new QuoteError(
          `amount ${request.amount} ${symbol} is too small: the privacy pool takes deposits of at least ${formatAmount(fees.minimumDeposit, hubToken.decimals)} ${hubToken.symbol}`,
        );
      }
      const noteValue = bridgeIn.amountOut - poolFee(bridgeIn.amountOut, fees.depositFeeBps);
      const exitBalance = noteValue - poolFee(noteValue, fees.withdrawalFeeBps);
      if (exitBalance <= 0n) throw new QuoteError(`amount ${request.amount} ${symbol} is too small to cover the bridge and privacy pool costs`);

      const bridgeOut = await deps.bridge.quote({
        ...preview,
        originChainId: hubChain.chainId,
        destinationChainId: destChain.chainId,
        originCurrency: hubToken.address,
        destinationCurrency: destToken.address,
        amount: exitBalance,
        tradeType: 'EXACT_INPUT',
      });

      const [sourcePrice, destPrice] = await Promise.all([
        deps.bridge.tokenUsdPrice(sourceChain.chainId, sourceToken.address),
        deps.bridge.tokenUsdPrice(destChain.chainId, destToken.address),
      ]);
      if (destPrice === null) throw new QuoteError(`no USD price for ${destSymbol} on chain ${destChain.chainId}; the minimum fee cannot be computed`);

      const fee = serviceFee(bridgeOut.amountOut, deps.feePolicy, destPrice, destToken.decimals);
      const output = bridgeOut.amountOut - fee;
      if (output <= 0n) {
        throw new QuoteError(`amount ${request.amount} ${symbol} is too small: the fees exceed the output (minimum fee ${deps.feePolicy.feeMinUsd} USD)`);
      }

      return {
        sourceToken,
        hubToken,
        destToken,
        quote: {
          symbol: sourceToken.symbol,
          destSymbol: destToken.symbol,
          sourceChainId: sourceChain.chainId,
          destChainId: destChain.chainId,
          hubChainId: hubChain.chainId,
          amount: amount.toString(),
          quotedOutputAmount: output.toString(),
          feeAmount: fee.toString(),
          bridgeFeeAmount: '0',
          privacyFeeAmount: '0',
          amountInUsd: unitsToUsd(amount, sourceToken.decimals, sourcePrice),
          quotedOutputUsd: unitsToUsd(output, destToken.decimals, destPrice),
          feeUsd: unitsToUsd(fee, destToken.decimals, destPrice),
          bridgeFeeUsd: 0,
          privacyFeeUsd: 0,
          etaSeconds: bridgeIn.timeEstimateSeconds + deps.poolEtaSeconds + bridgeOut.timeEstimateSeconds,
          route: [
            `${sourceToken.symbol} on ${sourceChain.displayName}`,
            `${hubToken.symbol} on ${hubChain.displayName}`,
            `Privacy pool on ${hubChain.displayName}`,
            `${destToken.symbol} on ${destChain.displayName}`,
          ],
        },
      };
    },
  };
}
