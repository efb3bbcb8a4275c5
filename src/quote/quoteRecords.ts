import { randomBytes } from 'node:crypto';
import { eq, lt } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { quotes } from '../db/schema.ts';
import { AmountError } from '../money/amount.ts';
import type { BridgeToken } from '../providers/bridge.ts';
import { QuoteError, type QuoteService, requestedAmount, requestedTokens, type ResolvedQuote, type TransferRequest } from './quoteService.ts';
import type { TokenChoice } from './tokenChoice.ts';

/** `qt_` + 32 hex characters (128 random bits). */
export const QUOTE_ID_PATTERN = /^qt_[0-9a-f]{32}$/;

/** Expired quotes are deleted this long after they expire (a create citing one gets the same 409 either way). */
const KEEP_EXPIRED_MS = 60 * 60 * 1000;
const PURGE_EVERY_MS = 60_000;

export interface QuoteRecords {
  /** Gives a quote its quoteId and expiresAt and keeps it until then, for the partner who asked (none: no key). */
  record(resolved: ResolvedQuote, partnerId?: number): Promise<ResolvedQuote>;
  /**
   * The quote `quoteId` names, for a create of the same request while it is fresh: a QuoteError QUOTE_EXPIRED when it
   * is unknown or expired, QUOTE_MISMATCH when the request asks for another pair or amount.
   */
  recall(quoteId: string, request: TransferRequest): Promise<ResolvedQuote>;
}

export interface QuoteRecordOptions {
  /** QUOTE_TTL_SECONDS: how long a quote may be cited, at most; never past its held prices' end. */
  ttlSeconds: number;
  now?: () => number;
}

export function createQuoteRecords(db: Database, options: QuoteRecordOptions): QuoteRecords {
  const now = options.now ?? Date.now;
  let lastPurge = 0;

  async function purgeExpired() {
    if (now() - lastPurge < PURGE_EVERY_MS) return;
    lastPurge = now();
    await db.delete(quotes).where(lt(quotes.expiresAt, new Date(now() - KEEP_EXPIRED_MS)));
  }

  return {
    async record(resolved, partnerId) {
      const quoteId = `qt_${randomBytes(16).toString('hex')}`;
      const heldUntil = resolved.quote.amountClass.priceHeldUntil;
      // A quote that converts assets promises a held price: it cannot outlive the epoch that holds it.
      const expires = Math.min(now() + options.ttlSeconds * 1000, heldUntil === null ? Number.POSITIVE_INFINITY : Date.parse(heldUntil));
      const expiresAt = new Date(expires).toISOString();
      const recorded: ResolvedQuote = { ...resolved, quote: { ...resolved.quote, quoteId, expiresAt } };
      await db.insert(quotes).values({ quoteId, resolved: withoutAdvice(recorded), partnerId: partnerId ?? null, expiresAt: new Date(expires) });
      await purgeExpired();
      return recorded;
    },

    async recall(quoteId, request) {
      const [row] = QUOTE_ID_PATTERN.test(quoteId) ? await db.select().from(quotes).where(eq(quotes.quoteId, quoteId)) : [];
      if (!row || row.expiresAt.getTime() <= now()) {
        throw new QuoteError(
          `quoteId ${quoteId.slice(0, 40)} is unknown or has expired: quote again and create with the new quoteId, or create without a quoteId to be priced afresh`,
          { code: 'QUOTE_EXPIRED' },
        );
      }
      const resolved = row.resolved as ResolvedQuote;
      const problem = row.partnerId !== (request.partnerId ?? null) ? 'another API key (cite it with the key that asked for it)' : mismatch(resolved, request);
      if (problem) {
        throw new QuoteError(`quoteId ${quoteId} was quoted for ${problem}: create with the quoted request, or without a quoteId`, { code: 'QUOTE_MISMATCH' });
      }
      return resolved;
    },
  };
}

/** A quote as a create uses it: the advice meant for the one who asked (paidLast24h, suggestions) is not kept. */
function withoutAdvice(resolved: ResolvedQuote): ResolvedQuote {
  const { paidLast24h: _, suggestions: __, ...amountClass } = resolved.quote.amountClass;
  return { ...resolved, quote: { ...resolved.quote, amountClass } };
}

/** Whether `choice` names `token`: by address, by symbol (case-insensitive), or both. */
const names = (choice: TokenChoice, token: BridgeToken) =>
  (choice.address === undefined || choice.address.toLowerCase() === token.address.toLowerCase()) &&
  (choice.symbol === undefined || choice.symbol.toUpperCase() === token.symbol.toUpperCase());

/**
 * What differs between the quoted request and this one, or null. Tokens are compared as resolved, so a request that
 * names a token by symbol and one that names it by address are the same request.
 */
function mismatch({ quote, sourceToken, destToken }: ResolvedQuote, request: TransferRequest): string | null {
  const named = requestedTokens(request);
  if (quote.sourceChainId !== request.sourceChainId || quote.destChainId !== request.destChainId) {
    return `chains ${quote.sourceChainId} → ${quote.destChainId}`;
  }
  if (!names(named.source, sourceToken) || !names(named.destSameAsSource ? { symbol: sourceToken.symbol } : named.dest, destToken)) {
    return `${quote.symbol} (${sourceToken.address}) → ${quote.destSymbol} (${destToken.address})`;
  }
  if ((quote.partnerFeeBps ?? 0) !== (request.partnerFeeBps ?? 0)) return "another partner's fee (cite it with the API key that asked for it)";
  let amount: bigint | null;
  try {
    amount = requestedAmount(request, sourceToken.decimals);
  } catch (error) {
    if (!(error instanceof AmountError)) throw error;
    amount = null;
  }
  return amount === BigInt(quote.amount) ? null : `another amount (${quote.amount} smallest units of ${quote.symbol})`;
}

/** Quotes (not creates, which price afresh or recall) carry a quoteId and an expiresAt. */
export function withQuoteRecords(service: QuoteService, records: QuoteRecords): QuoteService {
  return {
    ...service,
    async quote(request, options) {
      const resolved = await service.quote(request, options);
      return options?.fresh ? resolved : records.record(resolved, request.partnerId);
    },
  };
}
