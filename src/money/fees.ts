import { ceilDiv, parseDecimal } from './amount.ts';

export interface FeePolicy {
  /** Percentage of the amount, in basis points (150 = 1.5 %). */
  feeBps: bigint;
  /** Minimum fee in USD as a decimal string ("1"). */
  feeMinUsd: string;
}

/**
 * Converts a USD amount into smallest units of a token priced at `tokenUsdPrice` (USD per whole token),
 * rounding up so that a minimum is never undercut.
 */
export function usdToTokenUnits(usd: string, tokenUsdPrice: string, decimals: number): bigint {
  const value = parseDecimal(usd);
  const price = parseDecimal(tokenUsdPrice);
  if (price.units === 0n) throw new RangeError('token price is zero');
  // units = usd / price * 10^decimals = (value.units / value.scale) / (price.units / price.scale) * 10^decimals
  return ceilDiv(value.units * price.scale * 10n ** BigInt(decimals), value.scale * price.units);
}

/**
 * The service fee in destination-token units, charged on the destination side:
 * max(feeBps of the gross destination output, the USD minimum converted at the destination token's price + `networkCost`),
 * where `networkCost` is the route's own gas in destination units (src/quote/gasCost.ts): the floor covers what the
 * route costs the service and still earns the minimum. The percentage rounds up: the service never charges less than its rate.
 */
export function serviceFee(grossOutput: bigint, policy: FeePolicy, destTokenUsdPrice: string, destDecimals: number, networkCost = 0n): bigint {
  const percentage = ceilDiv(grossOutput * policy.feeBps, 10_000n);
  const floor = usdToTokenUnits(policy.feeMinUsd, destTokenUsdPrice, destDecimals) + networkCost;
  return percentage > floor ? percentage : floor;
}

/**
 * The smallest gross destination output that leaves at least `net` after the service fee: the inverse of
 * `gross - serviceFee(gross)`, which never decreases as the gross grows (the fee grows by at most one unit per unit).
 */
export function grossForServiceFee(net: bigint, policy: FeePolicy, destTokenUsdPrice: string, destDecimals: number, networkCost = 0n): bigint {
  if (policy.feeBps >= 10_000n) throw new RangeError('a fee of 100 % or more leaves nothing');
  const minimum = usdToTokenUnits(policy.feeMinUsd, destTokenUsdPrice, destDecimals) + networkCost;
  const percentageFee = (gross: bigint) => ceilDiv(gross * policy.feeBps, 10_000n);
  let gross = ceilDiv(net * 10_000n, 10_000n - policy.feeBps);
  while (gross - percentageFee(gross) < net) gross += 1n;
  while (gross > 0n && gross - 1n - percentageFee(gross - 1n) >= net) gross -= 1n;
  return gross > net + minimum ? gross : net + minimum;
}

/** Fee the privacy pool takes on a deposit or a withdrawal (floor, as the pool contract computes it). */
export function poolFee(amount: bigint, feeBps: number): bigint {
  return (amount * BigInt(feeBps)) / 10_000n;
}

/** The smallest gross amount whose net after a floored `feeBps` fee is at least `net`. */
export function grossForNet(net: bigint, feeBps: number): bigint {
  if (feeBps < 0 || feeBps >= 10_000) throw new RangeError(`fee of ${feeBps} bps is out of range`);
  const bps = BigInt(feeBps);
  // gross - floor(gross * bps / 10^4) >= net  <=>  gross >= net * 10^4 / (10^4 - bps), up to the floor's slack
  let gross = ceilDiv(net * 10_000n, 10_000n - bps);
  while (gross > 0n && gross - 1n - poolFee(gross - 1n, feeBps) >= net) gross -= 1n;
  return gross;
}

/** USD value of `units` at `tokenUsdPrice`, as a number for display (never used for amount math). */
export function unitsToUsd(units: bigint, decimals: number, tokenUsdPrice: string | null): number | null {
  if (tokenUsdPrice === null) return null;
  const price = parseDecimal(tokenUsdPrice);
  // cents precision, computed exactly then converted once
  const cents = (units * price.units * 100n) / (price.scale * 10n ** BigInt(decimals));
  return Number(cents) / 100;
}
