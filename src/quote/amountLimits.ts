import { formatAmount, parseDecimal } from '../money/amount.ts';
import type { BridgeToken } from '../providers/bridge.ts';
import { createTtlCache } from '../providers/ttlCache.ts';
import { pairKey, QuoteError, type QuoteService, sameAsset, type TransferRequest } from './quoteService.ts';

export interface AmountLimitSettings {
  /** MAX_TRANSFER_USD: the largest transfer the service takes, in USD (a decimal string); null: no maximum. */
  maxTransferUsd: string | null;
  /** A source token's USD price (decimal string), or null where none is known (then no maximum applies). */
  usdPrice(token: BridgeToken): Promise<string | null>;
  /** How long a pair's minimum is reused. Default one minute. */
  minimumTtlMs?: number;
}

/** The smallest output a quote can pay: one smallest unit of the destination token. */
const SMALLEST_OUTPUT = 1n;

/**
 * Quotes that carry the pair's limits up front (`minAmount`, `maxAmount`, source smallest units), so a wallet can
 * show them before the user types, and that refuse an amount above the maximum:
 * - minAmount: the smallest input that pays anything at the prices a quote uses now (the pool's minimum deposit,
 *   the fees' floor and the bridges included), computed once a minute per pair;
 * - maxAmount: MAX_TRANSFER_USD at the source token's price, rounded down; null without a maximum (without a price
 *   the quote is refused, NO_ROUTE).
 * A quote refused as too small says the pair's minimum in its message.
 */
export function withAmountLimits(service: QuoteService, settings: AmountLimitSettings): QuoteService {
  const minimums = createTtlCache<bigint | null>({ ttlMs: settings.minimumTtlMs ?? 60_000 });
  const minimumOf = (request: TransferRequest) =>
    minimums.get(pairKey(request), async () => {
      try {
        return await service.inputFor(request, SMALLEST_OUTPUT);
      } catch (error) {
        if (error instanceof QuoteError) return null;
        throw error;
      }
    });

  /**
   * The maximum in `token` units. Without a price of its own, a token worth what the destination token is (the same
   * asset) takes the destination's; with neither, the quote is refused: a maximum is never skipped for want of a price.
   */
  async function maximumOf(token: BridgeToken, destToken: BridgeToken): Promise<bigint | null> {
    if (settings.maxTransferUsd === null) return null;
    const price = (await settings.usdPrice(token)) ?? (sameAsset(token, destToken) ? await settings.usdPrice(destToken) : null);
    const perToken = price === null ? null : parseDecimal(price);
    if (perToken === null || perToken.units === 0n) {
      throw new QuoteError(`no USD price for ${token.symbol} on chain ${token.chainId}; the service's maximum per transfer cannot be applied`, {
        code: 'NO_ROUTE',
      });
    }
    const usd = parseDecimal(settings.maxTransferUsd);
    return (usd.units * perToken.scale * 10n ** BigInt(token.decimals)) / (usd.scale * perToken.units);
  }

  return {
    ...service,
    async quote(request, options) {
      let resolved: Awaited<ReturnType<QuoteService['quote']>>;
      try {
        resolved = await service.quote(request, options);
      } catch (error) {
        if (!(error instanceof QuoteError) || error.limit !== 'min') throw error;
        const minimum = await minimumOf(request).catch(() => null);
        const token = error.sourceToken;
        if (minimum === null || token === undefined) throw error;
        throw new QuoteError(`${error.message}; the smallest amount this pair takes now is ${formatAmount(minimum, token.decimals)} ${token.symbol}`, {
          code: 'INVALID_AMOUNT',
          limit: 'min',
          sourceToken: token,
        });
      }
      const { quote, sourceToken, destToken } = resolved;
      const [minimum, maximum] = await Promise.all([minimumOf(request).catch(() => null), maximumOf(sourceToken, destToken)]);
      if (maximum !== null && BigInt(quote.amount) > maximum) {
        throw new QuoteError(
          `amount ${formatAmount(BigInt(quote.amount), sourceToken.decimals)} ${sourceToken.symbol} is too large: the service takes at most ${formatAmount(maximum, sourceToken.decimals)} ${sourceToken.symbol} per transfer`,
          { code: 'INVALID_AMOUNT', limit: 'max', sourceToken },
        );
      }
      return { ...resolved, quote: { ...quote, minAmount: minimum?.toString() ?? null, maxAmount: maximum?.toString() ?? null } };
    },
  };
}
