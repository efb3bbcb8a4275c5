/**
 * Amount buckets and anonymity sets of the privacy pool.
 *
 * Amounts are public on chain: an observer tells a 125.50 USDC deposit from a 121.00 one at a glance, so only
 * deposits of about the same value can hide each other. A bucket is a note value rounded to three
 * significant digits (half up): 100.00 and 100.40 USDC share the bucket 100 (6 decimals: "100000000"),
 * 125.5 → 126, 1,234.56 → 1,230, 0.98765 → 0.988. Three digits absorb the small drift of bridge prices
 * between transfers of the same requested amount, while different requested amounts land in different buckets.
 *
 * A route's anonymity set (counted in activities/pool.ts) is its own deposit plus every deposit of the service
 * in the same bucket that entered the pool after it, was in the pool state its withdrawal was proved against
 * (a public root: later deposits cannot be the spent note), and was not ragequit: the deposits an observer
 * cannot tell its withdrawal apart from by amount or order. Only the service's deposits count, because the
 * one gas account and the one relayer mark which deposits and withdrawals are the service's. It counts
 * itself, so 1 means nobody else.
 */
const SIGNIFICANT_DIGITS = 3;

export function amountBucket(value: bigint): string {
  if (value < 0n) throw new RangeError('a pool note value cannot be negative');
  const digits = value.toString().length;
  if (digits <= SIGNIFICANT_DIGITS) return value.toString();
  const unit = 10n ** BigInt(digits - SIGNIFICANT_DIGITS);
  return (((value + unit / 2n) / unit) * unit).toString();
}
