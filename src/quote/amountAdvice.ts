import { and, count, eq, gt, inArray, sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { poolNotes, transfers } from '../db/schema.ts';
import { formatAmount } from '../money/amount.ts';
import { amountClassKey, nextAmountClass, previousAmountClass } from '../privacy/amountClass.ts';
import type { AmountSuggestion, QuoteService } from './quoteService.ts';

/** How many classes on each side of the quote's own are looked at for a busier one. */
const NEIGHBOUR_CLASSES = 5;
/** Suggestions per quote at most. */
const MAX_SUGGESTIONS = 3;

/**
 * How many transfers of each class (amountClassKey) the service paid out in the last 24 hours. Only payouts, which are
 * public (the destination chain shows each one, the bridge's history ties it to the service): how many of a class
 * wait in the pool now is not, since a fresh deposit's class and destination are known only once it pays out.
 */
export type ClassActivity = (classKeys: string[]) => Promise<Map<string, number>>;

export function createClassActivity(db: Database): ClassActivity {
  return async (classKeys) => {
    if (classKeys.length === 0) return new Map();
    const rows = await db
      .select({ amountClass: poolNotes.amountClass, paid: count() })
      .from(poolNotes)
      .innerJoin(transfers, eq(transfers.routeId, poolNotes.routeId))
      .where(and(inArray(poolNotes.amountClass, classKeys), eq(transfers.status, 'COMPLETED'), gt(transfers.completedAt, sql`now() - interval '24 hours'`)))
      .groupBy(poolNotes.amountClass);
    return new Map(rows.map((r) => [r.amountClass ?? '', r.paid]));
  };
}

/** The classes around `value`: up to `n` below and `n` above, in order. */
function neighbours(value: bigint, n: number): bigint[] {
  const below: bigint[] = [];
  for (let v: bigint | null = previousAmountClass(value); v !== null && v > 0n && below.length < n; v = previousAmountClass(v)) below.unshift(v);
  const above: bigint[] = [];
  for (let v = nextAmountClass(value); above.length < n; v = nextAmountClass(v)) above.push(v);
  return [...below, value, ...above];
}

/**
 * Quotes with advice on the amount (docs/api.md, "Amount classes"): how many transfers of the payout's class the
 * service paid in the last day, and up to three input amounts worth a look: the smallest input that pays the same
 * class (when the quote's own rounding costs something), the smallest that pays the next class up, and the smallest
 * that pays the busiest class nearby. A create (`fresh`) gets none of it: it pays for the quote alone. Advice that
 * fails to price is left out, never an error.
 */
export function withAmountAdvice(service: QuoteService, activity: ClassActivity): QuoteService {
  return {
    ...service,
    async quote(request, options) {
      const resolved = await service.quote(request, options);
      if (options?.fresh) return resolved;
      const { quote, sourceToken, destToken } = resolved;
      const own = BigInt(quote.amountClass.value);
      const classes = neighbours(own, NEIGHBOUR_CLASSES);
      const keyOf = (value: bigint) => amountClassKey(quote.destChainId, destToken.address, value);
      const paid = await activity(classes.map(keyOf));
      const paidIn = (value: bigint) => paid.get(keyOf(value)) ?? 0;

      const busiest = classes.reduce((best, v) => (paidIn(v) > paidIn(best) ? v : best), own);
      const targets = [...new Set([...(quote.roundingAmount !== '0' ? [own] : []), nextAmountClass(own), busiest])];
      const priced = await Promise.all(
        targets.map(async (value): Promise<(AmountSuggestion & { input: bigint }) | null> => {
          try {
            const input = await service.inputFor(request, value);
            if (value === own && input >= BigInt(quote.amount)) return null;
            // Never an amount the service would refuse.
            if (quote.maxAmount != null && input > BigInt(quote.maxAmount)) return null;
            return { amount: formatAmount(input, sourceToken.decimals), quotedOutputAmount: value.toString(), paidLast24h: paidIn(value), input };
          } catch {
            return null;
          }
        }),
      );
      const amount = BigInt(quote.amount);
      const distance = (x: bigint) => (x > amount ? x - amount : amount - x);
      const suggestions = priced
        .filter((s): s is NonNullable<typeof s> => s !== null)
        .sort((a, b) => b.paidLast24h - a.paidLast24h || (distance(a.input) < distance(b.input) ? -1 : 1))
        .slice(0, MAX_SUGGESTIONS)
        .map(({ input: _, ...suggestion }) => suggestion);
      return { ...resolved, quote: { ...quote, amountClass: { ...quote.amountClass, paidLast24h: paidIn(own), suggestions } } };
    },
  };
}
