/**
 * Exact pricing for the emulator's solver. Prices are USD per whole token, kept as rationals
 * of bigints; amounts are smallest units. No floating point touches an amount.
 */

export const BPS = 10_000n;

/** USD per whole token as numerator / denominator. */
export interface UsdPrice {
  numerator: bigint;
  denominator: bigint;
}

export interface PricedToken {
  decimals: number;
  price: UsdPrice;
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** Parses a positive decimal like "2500" or "0.9998". */
export function parseUsdPrice(text: string): UsdPrice {
  const match = DECIMAL.exec(text.trim());
  if (!match) throw new Error(`not a decimal USD price: "${text}"`);
  const fraction = match[2] ?? '';
  const price = { numerator: BigInt(match[1]! + fraction), denominator: 10n ** BigInt(fraction.length) };
  if (price.numerator === 0n) throw new Error(`USD price must be positive: "${text}"`);
  return price;
}

export function validateFeeBps(feeBps: number): bigint {
  if (!Number.isInteger(feeBps) || feeBps < 0 || feeBps >= Number(BPS)) {
    throw new Error(`feeBps must be an integer in [0, ${BPS}) (got ${feeBps})`);
  }
  return BigInt(feeBps);
}

/**
 * amountOut = amountIn · (pIn / pOut) · 10^dOut / 10^dIn · (1 - fee) = amountIn · N / D.
 * Keeping the whole conversion as one fraction means exactly one rounding step.
 */
function rate(from: PricedToken, to: PricedToken, feeBps: bigint): { n: bigint; d: bigint } {
  return {
    n: from.price.numerator * to.price.denominator * 10n ** BigInt(to.decimals) * (BPS - feeBps),
    d: from.price.denominator * to.price.numerator * 10n ** BigInt(from.decimals) * BPS,
  };
}

/** What `amountIn` of `from` buys of `to` after the fee, rounded down. */
export function quoteExactInput(amountIn: bigint, from: PricedToken, to: PricedToken, feeBps: bigint): bigint {
  const { n, d } = rate(from, to, feeBps);
  return (amountIn * n) / d;
}

/**
 * The smallest input for which quoteExactInput yields at least `amountOut`:
 * floor(x·N/D) ≥ k ⇔ x·N/D ≥ k ⇔ x ≥ k·D/N, so x = ceil(k·D/N).
 */
export function quoteExactOutput(amountOut: bigint, from: PricedToken, to: PricedToken, feeBps: bigint): bigint {
  const { n, d } = rate(from, to, feeBps);
  return (amountOut * d + n - 1n) / n;
}

/** USD value of `amount` smallest units in micro-dollars, rounded down. */
export function usdMicros(amount: bigint, token: PricedToken): bigint {
  return (amount * token.price.numerator * 1_000_000n) / (token.price.denominator * 10n ** BigInt(token.decimals));
}

/** USD value of `amount` smallest units, rounded down to 6 decimals ("30.901612"). */
export function usdValue(amount: bigint, token: PricedToken): string {
  return formatUnits(usdMicros(amount, token), 6);
}

/** Smallest units as a decimal string without trailing zeros ("12.5"). */
export function formatUnits(amount: bigint, decimals: number): string {
  const negative = amount < 0n;
  const abs = negative ? -amount : amount;
  const scale = 10n ** BigInt(decimals);
  const fraction = (abs % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / scale}${fraction ? `.${fraction}` : ''}`;
}

/** The price as a decimal string, rounded down to 18 decimals ("2501.25"). */
export function formatUsdPrice(price: UsdPrice): string {
  return formatUnits((price.numerator * 10n ** 18n) / price.denominator, 18);
}

/** The price as a JSON number, the way Relay's /currencies/token/price reports it. */
export function priceAsNumber(price: UsdPrice): number {
  return Number(formatUsdPrice(price));
}
