import type { Address } from 'viem';
import { AmountError, ceilDiv, formatAmount, parseAmount, parseDecimal, parseSmallestUnits } from '../money/amount.ts';
import { grossForNet, grossForServiceFee, poolFee, serviceFee, unitsToUsd, usdToTokenUnits, type FeePolicy } from '../money/fees.ts';
import type { PrivacyPool } from '../providers/privacyPool.ts';
import type { BridgeChain, BridgeToken, DepositAddressBridge } from '../providers/bridge.ts';
import { amountClassOf, roundingBps } from '../privacy/amountClass.ts';
import type { NetworkCosts } from './gasCost.ts';
import type { HeldPrice, PriceEpochs } from './priceEpochs.ts';
import { matchesTokenSearch, pickToken, type TokenChoice, type TokenFields } from './tokenChoice.ts';

export interface TransferRequest {
  sourceChainId: number;
  destChainId: number;
  /** Decimal whole source tokens ("12.5"); exactly one of amount and amountSmallestUnits (see requestedAmount). */
  amount?: string;
  /** Integer source smallest units ("12500000"), the alternative to amount. */
  amountSmallestUnits?: string;
  tokenSymbol?: string;
  destTokenSymbol?: string;
  /** The source token by its contract address, instead of or with tokenSymbol (src/quote/tokenChoice.ts). */
  tokenAddress?: string;
  /** The destination token by its contract address, instead of or with destTokenSymbol. */
  destTokenAddress?: string;
  /** The fee of the partner whose API key asks (src/quote/partnerFees.ts); set by the API from the key, never from the body. */
  partnerFeeBps?: number;
  /** That partner (api_keys.id), set likewise: a quoteId is for the key that asked for it (src/quote/quoteRecords.ts). */
  partnerId?: number;
  /** The anonymity set a create asks for: etaSeconds counts the wait in the pool for it (src/quote/privacyEta.ts). */
  minAnonymitySet?: number;
}

/** The API's code for each way a request cannot be quoted (src/api/errorCodes.ts says what each means). */
export type QuoteErrorCode =
  | 'INVALID_REQUEST'
  | 'INVALID_AMOUNT'
  | 'UNSUPPORTED_CHAIN'
  | 'UNSUPPORTED_TOKEN'
  | 'AMBIGUOUS_TOKEN'
  | 'TOKEN_MISMATCH'
  | 'UNSUPPORTED_PAIR'
  | 'NO_ROUTE'
  | 'QUOTE_EXPIRED'
  | 'QUOTE_MISMATCH';

export interface QuoteErrorDetails {
  code: QuoteErrorCode;
  /** The amount is outside the pair's limits: below what the route can pay anything for, or above the service's maximum. */
  limit?: 'min' | 'max';
  /** The source token the amount is in, where it was resolved. */
  sourceToken?: BridgeToken;
}

/** The request cannot be quoted as asked; the message says why, the code which way (HTTP 400; 409 for a stale quoteId). */
export class QuoteError extends Error {
  override name = 'QuoteError';
  readonly code: QuoteErrorCode;
  readonly limit?: 'min' | 'max';
  readonly sourceToken?: BridgeToken;
  constructor(message: string, details: QuoteErrorDetails) {
    super(message);
    this.code = details.code;
    this.limit = details.limit;
    this.sourceToken = details.sourceToken;
  }
}

export interface Quote {
  /** Quotes only (src/quote/quoteRecords.ts): names this quote for a create that wants exactly it, until expiresAt. */
  quoteId?: string;
  expiresAt?: string;
  /** Quotes only (src/quote/amountLimits.ts): the pair's limits, source smallest units; null where unknown or none. */
  minAmount?: string | null;
  maxAmount?: string | null;
  symbol: string;
  destSymbol: string;
  /** The tokens by address (a symbol may name two tokens of a chain). */
  sourceToken: QuotedToken;
  destToken: QuotedToken;
  sourceChainId: number;
  destChainId: number;
  hubChainId: number;
  amount: string;
  quotedOutputAmount: string;
  feeAmount: string;
  /** Addition to the spec: the part of feeAmount that pays the service's own gas for this route (destination units). */
  networkCostAmount: string;
  bridgeFeeAmount: string;
  privacyFeeAmount: string;
  amountInUsd: number | null;
  quotedOutputUsd: number | null;
  feeUsd: number | null;
  networkCostUsd: number | null;
  bridgeFeeUsd: number | null;
  privacyFeeUsd: number | null;
  /** Addition to the spec: the partner's fee (src/quote/partnerFees.ts), destination units; "0" without a partner fee. */
  partnerFeeAmount?: string;
  partnerFeeUsd?: number | null;
  partnerFeeBps?: number;
  /** Addition to the spec: what rounding the output down to its amount class cost (destination units). */
  roundingAmount: string;
  roundingUsd: number | null;
  etaSeconds: number;
  route: string[];
  /** Addition to the spec: the payout's amount class and the price epoch behind it (docs/api.md, "Amount classes"). */
  amountClass: AmountClassInfo;
}

export interface AmountClassInfo {
  /** The payout's amount class: a value of the public grid (src/privacy/amountClass.ts), equal to quotedOutputAmount. */
  value: string;
  /** roundingAmount in basis points of the output before rounding. */
  roundingBps: number;
  /** When the held prices of this quote's cross-asset conversions are due to be replaced; null when nothing is converted. */
  priceHeldUntil: string | null;
  /** Transfers of this class the service paid out in the last 24 hours (quotes only; see withAmountAdvice). */
  paidLast24h?: number;
  /** Input amounts with no rounding cost or with busier classes nearby (quotes only; see withAmountAdvice). */
  suggestions?: AmountSuggestion[];
}

export interface AmountSuggestion {
  /** Input, human decimal in source-token units, like the request's amount. */
  amount: string;
  /** The class it pays out, destination smallest units: the smallest input that reaches it, so it loses almost nothing to rounding. */
  quotedOutputAmount: string;
  paidLast24h: number;
}

/** A token as the answers name it. */
export interface QuotedToken {
  chainId: number;
  address: string;
  symbol: string;
  decimals: number;
}

export const quotedToken = (token: BridgeToken): QuotedToken => ({
  chainId: token.chainId,
  address: token.address,
  symbol: token.symbol,
  decimals: token.decimals,
});

/**
 * The request's amount in source smallest units: `amount` in decimal whole tokens or `amountSmallestUnits` as an
 * integer, exactly one of them. Throws AmountError.
 */
export function requestedAmount(request: Pick<TransferRequest, 'amount' | 'amountSmallestUnits'>, decimals: number): bigint {
  const { amount, amountSmallestUnits } = request;
  if (amount !== undefined && amountSmallestUnits !== undefined) {
    throw new AmountError('send either amount (decimal whole tokens, e.g. "12.5") or amountSmallestUnits (integer smallest units, e.g. "12500000"), not both');
  }
  if (amountSmallestUnits !== undefined) return parseSmallestUnits(amountSmallestUnits, decimals);
  if (amount === undefined) throw new AmountError('amount is required (decimal whole tokens, e.g. "12.5"), or amountSmallestUnits (integer smallest units)');
  return parseAmount(amount, decimals);
}

/**
 * How the request names its tokens, with the defaults every quote service applies: the source USDC when neither its
 * symbol nor its address is given; the destination, when neither is given, the source token's symbol (known once
 * the source token is resolved: `destSameAsSource`).
 */
export function requestedTokens(request: Pick<TransferRequest, 'tokenSymbol' | 'tokenAddress' | 'destTokenSymbol' | 'destTokenAddress'>): {
  source: TokenChoice;
  dest: TokenChoice;
  destSameAsSource: boolean;
} {
  const source = { symbol: request.tokenSymbol ?? (request.tokenAddress === undefined ? 'USDC' : undefined), address: request.tokenAddress };
  const destSameAsSource = request.destTokenSymbol === undefined && request.destTokenAddress === undefined;
  return { source, dest: { symbol: request.destTokenSymbol, address: request.destTokenAddress }, destSameAsSource };
}

export const SOURCE_TOKEN_FIELDS: TokenFields = { symbol: 'tokenSymbol', address: 'tokenAddress' };
export const DEST_TOKEN_FIELDS: TokenFields = { symbol: 'destTokenSymbol', address: 'destTokenAddress' };

/**
 * What a quote depends on apart from its amount (the pair, case-insensitive symbols, the partner's fee): requests
 * with the same pair key are quoted alike, to the amount.
 */
export function pairKey(request: TransferRequest): string {
  const { source, dest, destSameAsSource } = requestedTokens(request);
  const named = (choice: TokenChoice) => [choice.symbol?.toUpperCase() ?? null, choice.address?.toLowerCase() ?? null];
  const destKey = destSameAsSource && source.address === undefined ? named(source) : named(dest);
  return JSON.stringify([request.sourceChainId, request.destChainId, ...named(source), ...destKey, request.partnerFeeBps ?? 0]);
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
  /** The hub token by address (HUB_TOKEN_ADDRESS; the profiles pin the hub's USDC): a token list may hold two of a symbol. */
  hubTokenAddress?: Address;
  feePolicy: FeePolicy;
  /** The service's own gas per route at live fees (src/quote/networkCost.ts): part of the fee's floor. */
  networkCosts: NetworkCosts;
  /** Prices held per epoch for conversions between different assets (src/quote/priceEpochs.ts). */
  priceEpochs: PriceEpochs;
  /** Cross-asset conversions give up this much of the held price (PRICE_EPOCH_MARGIN_BPS). */
  priceMarginBps: number;
  /** Expected time in the privacy pool before the wait for the set (review, proof), part of etaSeconds (src/quote/privacyEta.ts adds the wait). */
  poolEtaSeconds: number;
  /** Placeholder account for preview quotes (no deposit address is allocated for those). */
  previewAccount: Address;
}

export interface QuoteOptions {
  /** Price afresh even when an identical request was quoted moments ago (a create does). */
  fresh?: boolean;
  /**
   * Whose cached quotes this request may share (src/quote/quoteCache.ts): the client's hash, so that how fast a quote
   * comes back tells no client whether another just asked the same exact (pair, amount). Unset: one cache for all.
   */
  cacheScope?: string;
}

export interface QuoteService {
  quote(request: TransferRequest, options?: QuoteOptions): Promise<ResolvedQuote>;
  /**
   * The smallest input (source smallest units) whose quote pays at least `output` before rounding, at the prices a
   * quote would use now (the request's own amount is ignored). Throws like `quote` when no route serves it.
   */
  inputFor(request: TransferRequest, output: bigint): Promise<bigint>;
  chains(): Promise<BridgeChain[]>;
  tokens(chainId: number, search?: string): Promise<BridgeToken[]>;
}

/** The payout rounded down to its amount class, and what the rounding cost. */
export function classOutput(raw: bigint): { output: bigint; rounding: bigint; roundingBps: number } {
  const output = amountClassOf(raw);
  return { output, rounding: raw - output, roundingBps: roundingBps(raw) };
}

/** Two tokens that are the same asset (a bridge moves them one for one, less fees): no price epoch is involved. */
export const sameAsset = (a: BridgeToken, b: BridgeToken) => a.symbol.toUpperCase() === b.symbol.toUpperCase();

/** A conversion at held USD prices: `from` units → `to` units, less `marginBps`, rounded down. */
export function convertAtHeldPrices(amount: bigint, from: { decimals: number; usd: string }, to: { decimals: number; usd: string }, marginBps: number): bigint {
  const pFrom = parseDecimal(from.usd);
  const pTo = parseDecimal(to.usd);
  if (pTo.units === 0n) throw new QuoteError('a held price of zero cannot convert', { code: 'INVALID_REQUEST' });
  const numerator = amount * pFrom.units * pTo.scale * 10n ** BigInt(to.decimals) * BigInt(10_000 - marginBps);
  const denominator = pFrom.scale * pTo.units * 10n ** BigInt(from.decimals) * 10_000n;
  return numerator / denominator;
}

/** The smallest `amount` whose convertAtHeldPrices is at least `out`. */
export function inputForHeldConversion(out: bigint, from: { decimals: number; usd: string }, to: { decimals: number; usd: string }, marginBps: number): bigint {
  const pFrom = parseDecimal(from.usd);
  const pTo = parseDecimal(to.usd);
  const numerator = pFrom.units * pTo.scale * 10n ** BigInt(to.decimals) * BigInt(10_000 - marginBps);
  const denominator = pFrom.scale * pTo.units * 10n ** BigInt(from.decimals) * 10_000n;
  if (numerator === 0n) throw new QuoteError('a held price of zero cannot convert', { code: 'INVALID_REQUEST' });
  return ceilDiv(out * denominator, numerator);
}

/**
 * Prices a transfer along its real path, with exact bigint math at every hop:
 *   amount (source) -bridge in-> hub asset -pool deposit fee-> note -relay fee-> withdrawable -bridge out-> gross output
 *   service fee = max(FEE_BPS of gross output, FEE_MIN_USD + the route's own gas at live fees, in destination units)
 *   quotedOutputAmount = gross output - service fee, rounded down to its amount class (the rest is roundingAmount)
 * A leg between two different assets converts at USD prices held for the price epoch, less PRICE_EPOCH_MARGIN_BPS
 * (src/quote/priceEpochs.ts), not at the live price, so that a payout does not encode the moment it was quoted; the
 * live bridge quote of that leg still checks that the route exists. A leg between two units of one asset is priced
 * by the live bridge quote. The bridge-out leg is later executed as EXACT_OUTPUT for quotedOutputAmount, so the service
 * fee and the rounding are the headroom that absorbs price movement between quote and payout (docs/money.md).
 *
 * Each quote reads the chain and token lists and the token prices: pass a bridge whose catalogue is cached
 * (withCatalogCache, as the runtime does) so that only the two bridge quotes reach the provider.
 */
export function createQuoteService(deps: QuoteServiceDeps): QuoteService {
  const chainList = () => deps.bridge.listChains();
  const allTokens = (chainId: number) => deps.bridge.listTokens(chainId);

  async function chainById(chainId: number, field: string): Promise<BridgeChain> {
    const chain = (await chainList()).find((c) => c.chainId === chainId);
    if (!chain) throw new QuoteError(`${field} ${chainId} is not a supported chain (see GET /api/bridge/chains)`, { code: 'UNSUPPORTED_CHAIN' });
    return chain;
  }

  async function tokenOf(chain: BridgeChain, choice: TokenChoice, fields: TokenFields): Promise<BridgeToken> {
    const picked = pickToken(await allTokens(chain.chainId), choice, fields, chain);
    if ('problem' in picked) throw new QuoteError(picked.problem.message, { code: picked.problem.code });
    return picked.token;
  }

  /** The hub token by HUB_TOKEN_SYMBOL: a symbol that names two tokens there is the operator's to settle. */
  async function hubTokenBySymbol(chain: BridgeChain): Promise<BridgeToken> {
    const picked = pickToken(await allTokens(chain.chainId), { symbol: deps.hubTokenSymbol }, { symbol: 'hub token', address: 'HUB_TOKEN_ADDRESS' }, chain);
    if ('problem' in picked) throw new QuoteError(`${picked.problem.message} (the operator's setting)`, { code: 'NO_ROUTE' });
    return picked.token;
  }

  async function tokenByAddress(chain: BridgeChain, address: Address): Promise<BridgeToken> {
    const token = (await allTokens(chain.chainId)).find((t) => t.address.toLowerCase() === address.toLowerCase());
    if (!token)
      throw new QuoteError(
        `the hub token ${address} (HUB_TOKEN_ADDRESS) is not in the bridge's token list of chain ${chain.chainId}: the operator must fix it`,
        {
          code: 'UNSUPPORTED_TOKEN',
        },
      );
    return token;
  }

  /** The request's chains and tokens, and its amount in source smallest units. */
  async function resolve(request: TransferRequest) {
    const named = requestedTokens(request);
    const [sourceChain, destChain, hubChain] = await Promise.all([
      chainById(request.sourceChainId, 'sourceChainId'),
      chainById(request.destChainId, 'destChainId'),
      chainById(deps.hubChainId, 'hub chain'),
    ]);
    const [sourceToken, hubToken] = await Promise.all([
      tokenOf(sourceChain, named.source, SOURCE_TOKEN_FIELDS),
      deps.hubTokenAddress ? tokenByAddress(hubChain, deps.hubTokenAddress) : hubTokenBySymbol(hubChain),
    ]);
    const destToken = await tokenOf(destChain, named.destSameAsSource ? { symbol: sourceToken.symbol } : named.dest, DEST_TOKEN_FIELDS);
    const symbol = sourceToken.symbol;
    if (sourceChain.chainId === hubChain.chainId || destChain.chainId === hubChain.chainId) {
      throw new QuoteError(`transfers from or to the hub chain ${hubChain.chainId} are not supported in deposit-address mode`, { code: 'UNSUPPORTED_CHAIN' });
    }
    let amount: bigint;
    try {
      amount = requestedAmount(request, sourceToken.decimals);
    } catch (error) {
      if (error instanceof AmountError) throw new QuoteError(error.message, { code: 'INVALID_AMOUNT' });
      throw error;
    }
    return { symbol, sourceChain, destChain, hubChain, sourceToken, destToken, hubToken, amount };
  }
  type Resolved = Awaited<ReturnType<typeof resolve>>;

  const held = (token: BridgeToken) => deps.priceEpochs.held(token, () => deps.bridge.tokenUsdPrice(token.chainId, token.address));

  /** The held prices of the route's tokens: the destination's always, the hub's when a leg converts assets. */
  async function heldPrices(route: Resolved) {
    const convertsIn = !sameAsset(route.sourceToken, route.hubToken);
    const convertsOut = !sameAsset(route.hubToken, route.destToken);
    const [source, hub, dest] = await Promise.all([held(route.sourceToken), convertsIn || convertsOut ? held(route.hubToken) : null, held(route.destToken)]);
    const required = (price: HeldPrice | null, token: BridgeToken, why: string): HeldPrice => {
      if (price === null) throw new QuoteError(`no USD price for ${token.symbol} on chain ${token.chainId}; ${why}`, { code: 'NO_ROUTE' });
      return price;
    };
    const destPrice = required(dest, route.destToken, 'the minimum fee cannot be computed');
    if (convertsIn || convertsOut) required(hub, route.hubToken, 'the cross-asset conversion cannot be priced');
    if (convertsIn) required(source, route.sourceToken, 'the cross-asset conversion cannot be priced');
    const conversions = [...(convertsIn ? [source!, hub!] : []), ...(convertsOut ? [hub!, destPrice] : [])];
    const heldUntil = conversions.length ? new Date(Math.min(...conversions.map((p) => p.endsAt.getTime()))).toISOString() : null;
    const priced = (token: BridgeToken, price: HeldPrice | null) => ({ decimals: token.decimals, usd: price?.usdPrice ?? '0' });
    return {
      convertsIn,
      convertsOut,
      heldUntil,
      source: priced(route.sourceToken, source),
      hub: priced(route.hubToken, hub),
      dest: priced(route.destToken, destPrice),
      sourceUsd: source?.usdPrice ?? null,
      destUsd: destPrice.usdPrice,
    };
  }

  const routeChains = (route: Resolved) => ({
    sourceChainId: route.sourceChain.chainId,
    hubChainId: route.hubChain.chainId,
    destChainId: route.destChain.chainId,
  });

  const preview = { user: deps.previewAccount, recipient: deps.previewAccount, refundTo: deps.previewAccount, useDepositAddress: false };
  const legIn = (route: Resolved) => ({
    ...preview,
    originChainId: route.sourceChain.chainId,
    destinationChainId: route.hubChain.chainId,
    originCurrency: route.sourceToken.address,
    destinationCurrency: route.hubToken.address,
  });
  const legOut = (route: Resolved) => ({
    ...preview,
    originChainId: route.hubChain.chainId,
    destinationChainId: route.destChain.chainId,
    originCurrency: route.hubToken.address,
    destinationCurrency: route.destToken.address,
  });

  return {
    chains: chainList,

    async tokens(chainId, search) {
      await chainById(chainId, 'chainId');
      return (await allTokens(chainId)).filter((t) => matchesTokenSearch(t, search));
    },

    async quote(request) {
      const route = await resolve(request);
      const { amount, sourceToken, destToken, hubToken, sourceChain, destChain, hubChain, symbol } = route;
      const asked = formatAmount(amount, sourceToken.decimals);
      const tooSmall: QuoteErrorDetails = { code: 'INVALID_AMOUNT', limit: 'min', sourceToken };
      const [bridgeIn, fees, prices, gasUsd] = await Promise.all([
        deps.bridge.quote({ ...legIn(route), amount, tradeType: 'EXACT_INPUT' }),
        deps.pool.fees(hubToken.address),
        heldPrices(route),
        deps.networkCosts.routeCostUsd(routeChains(route)),
      ]);
      const deposited = prices.convertsIn ? convertAtHeldPrices(amount, prices.source, prices.hub, deps.priceMarginBps) : bridgeIn.amountOut;
      if (deposited < fees.minimumDeposit) {
        throw new QuoteError(
          `amount ${asked} ${symbol} is too small: the privacy pool takes deposits of at least ${formatAmount(fees.minimumDeposit, hubToken.decimals)} ${hubToken.symbol}`,
          tooSmall,
        );
      }
      const noteValue = deposited - poolFee(deposited, fees.depositFeeBps);
      const exitBalance = noteValue - poolFee(noteValue, fees.withdrawalFeeBps);
      if (exitBalance <= 0n) throw new QuoteError(`amount ${asked} ${symbol} is too small to cover the bridge and privacy pool costs`, tooSmall);

      const bridgeOut = await deps.bridge.quote({ ...legOut(route), amount: exitBalance, tradeType: 'EXACT_INPUT' });
      const gross = prices.convertsOut ? convertAtHeldPrices(exitBalance, prices.hub, prices.dest, deps.priceMarginBps) : bridgeOut.amountOut;
      const networkCost = usdToTokenUnits(gasUsd, prices.destUsd, destToken.decimals);
      const fee = serviceFee(gross, deps.feePolicy, prices.destUsd, destToken.decimals, networkCost);
      if (gross - fee <= 0n) {
        throw new QuoteError(
          `amount ${asked} ${symbol} is too small: the fees exceed the output (minimum fee ${deps.feePolicy.feeMinUsd} USD plus ${gasUsd} USD of network fees at current gas prices)`,
          tooSmall,
        );
      }
      // What the live bridge would deliver along the same path now: the held prices may promise more (the bridge's own
      // costs, a market that moved within the epoch's band). The service fee carries the difference, never more, and
      // never the part of it that pays the route's gas.
      const livePath = (bridgeOut.amountOut * (prices.convertsIn ? bridgeIn.amountOut : deposited)) / deposited;
      if (prices.convertsIn || prices.convertsOut ? gross - livePath > fee - networkCost : false) {
        throw new QuoteError(
          `amount ${asked} ${symbol} is too small for this pair now: the bridge's costs exceed what the held price leaves (try a larger amount)`,
          tooSmall,
        );
      }
      const { output, rounding, roundingBps } = classOutput(gross - fee);
      const usd = (units: bigint) => unitsToUsd(units, destToken.decimals, prices.destUsd);

      return {
        sourceToken,
        hubToken,
        destToken,
        quote: {
          symbol: sourceToken.symbol,
          destSymbol: destToken.symbol,
          sourceToken: quotedToken(sourceToken),
          destToken: quotedToken(destToken),
          sourceChainId: sourceChain.chainId,
          destChainId: destChain.chainId,
          hubChainId: hubChain.chainId,
          amount: amount.toString(),
          quotedOutputAmount: output.toString(),
          feeAmount: fee.toString(),
          networkCostAmount: networkCost.toString(),
          bridgeFeeAmount: '0',
          privacyFeeAmount: '0',
          amountInUsd: unitsToUsd(amount, sourceToken.decimals, prices.sourceUsd),
          quotedOutputUsd: usd(output),
          feeUsd: usd(fee),
          networkCostUsd: usd(networkCost),
          bridgeFeeUsd: 0,
          privacyFeeUsd: 0,
          roundingAmount: rounding.toString(),
          roundingUsd: usd(rounding),
          etaSeconds: bridgeIn.timeEstimateSeconds + deps.poolEtaSeconds + bridgeOut.timeEstimateSeconds,
          route: [
            `${sourceToken.symbol} on ${sourceChain.displayName}`,
            `${hubToken.symbol} on ${hubChain.displayName}`,
            `Privacy pool on ${hubChain.displayName}`,
            `${destToken.symbol} on ${destChain.displayName}`,
          ],
          amountClass: { value: output.toString(), roundingBps, priceHeldUntil: prices.heldUntil },
        },
      };
    },

    async inputFor(request, output) {
      const route = await resolve(request);
      const [fees, prices, gasUsd] = await Promise.all([
        deps.pool.fees(route.hubToken.address),
        heldPrices(route),
        deps.networkCosts.routeCostUsd(routeChains(route)),
      ]);
      const networkCost = usdToTokenUnits(gasUsd, prices.destUsd, route.destToken.decimals);
      const gross = grossForServiceFee(output, deps.feePolicy, prices.destUsd, route.destToken.decimals, networkCost);
      const exitBalance = prices.convertsOut
        ? inputForHeldConversion(gross, prices.hub, prices.dest, deps.priceMarginBps)
        : (await deps.bridge.quote({ ...legOut(route), amount: gross, tradeType: 'EXACT_OUTPUT' })).amountIn;
      const noteValue = grossForNet(exitBalance, fees.withdrawalFeeBps);
      let deposited = grossForNet(noteValue, fees.depositFeeBps);
      if (deposited < fees.minimumDeposit) deposited = fees.minimumDeposit;
      return prices.convertsIn
        ? inputForHeldConversion(deposited, prices.source, prices.hub, deps.priceMarginBps)
        : (await deps.bridge.quote({ ...legIn(route), amount: deposited, tradeType: 'EXACT_OUTPUT' })).amountIn;
    },
  };
}
