import { formatAmount, parseDecimal } from '../money/amount.ts';
import type { BridgeToken } from '../providers/bridge.ts';
import { createTtlCache } from '../providers/ttlCache.ts';
import { QuoteError, type QuoteService, type TransferRequest } from './quoteService.ts';

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
 * - maxAmount: MAX_TRANSFER_USD at the source token's price, rounded down; null without a maximum or a price.
 * A quote refused as too small says the pair's minimum in its message.
 */
export function withAmountLimits(service: QuoteService, settings: AmountLimitSettings): QuoteService {
  const minimums = createTtlCache<bigint | null>({ ttlMs: settings.minimumTtlMs ?? 60_000 });
  const pairKey = (r: TransferRequest) =>
    JSON.stringify([r.sourceChainId, r.destChainId, (r.tokenSymbol ?? 'USDC').toUpperCase(), r.destTokenSymbol?.toUpperCase() ?? null, r.partnerFeeBps ?? 0]);
  const minimumOf = (request: TransferRequest) =>
    minimums.get(pairKey(request), async () => {
      try {
        return await service.inputFor(request, SMALLEST_OUTPUT);
      } catch (error) {
        if (error instanceof QuoteError) return null;
        throw error;
      }
    });

  async function maximumOf(token: BridgeToken): Promise<bigint | null> {
    if (settings.maxTransferUsd === null) return null;
    const price = await settings.usdPrice(token);
    if (price === null) return null;
    const usd = parseDecimal(settings.maxTransferUsd);
    const perToken = parseDecimal(price);
    if (perToken.units === 0n) return null;
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
      const { quote, sourceToken } = resolved;
      const [minimum, maximum] = await Promise.all([minimumOf(request).catch(() => null), maximumOf(sourceToken)]);
      if (maximum !== null && BigInt(quote.amount) > maximum) {
        throw new QuoteError(
          `amount ${request.amount} ${sourceToken.symbol} is too large: the service takes at most ${formatAmount(maximum, sourceToken.decimals)} ${sourceToken.symbol} per transfer`,
          { code: 'INVALID_AMOUNT', limit: 'max', sourceToken },
        );
      }
      return { ...resolved, quote: { ...quote, minAmount: minimum?.toString() ?? null, maxAmount: maximum?.toString() ?? null } };
    },
  };
}
