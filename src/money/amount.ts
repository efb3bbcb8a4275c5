/**
 * Exact decimal <-> smallest-unit conversions. No floating point ever touches an amount.
 */

/** Largest whole-token amount a request may carry; anything above is treated as a typo or an attack. */
export const MAX_WHOLE_TOKENS = 10n ** 15n;

export class AmountError extends Error {
  override name = 'AmountError';
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * Parses a human decimal ("12.5") into smallest units for a token with `decimals` decimals.
 * Rejects signs, exponents, blanks, more fractional digits than the token has, zero and absurd sizes.
 */
export function parseAmount(text: string, decimals: number, field = 'amount'): bigint {
  const match = DECIMAL.exec(text);
  if (!match) throw new AmountError(`${field} must be a positive decimal number like "12.5" (got "${truncate(text)}")`);
  const whole = match[1]!;
  const fraction = match[2] ?? '';
  if (fraction.length > decimals) {
    throw new AmountError(`${field} has ${fraction.length} decimal places but the token has only ${decimals}`);
  }
  if (BigInt(whole) >= MAX_WHOLE_TOKENS) throw new AmountError(`${field} is too large (must be below ${MAX_WHOLE_TOKENS} whole tokens)`);
  const units = BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
  if (units === 0n) throw new AmountError(`${field} must be greater than zero`);
  return units;
}

const INTEGER = /^\d+$/;

/**
 * Parses an integer string of smallest units ("12500000"), the alternative to a decimal amount: no sign, point,
 * exponent or blanks; greater than zero and below MAX_WHOLE_TOKENS whole tokens, like parseAmount.
 */
export function parseSmallestUnits(text: string, decimals: number, field = 'amountSmallestUnits'): bigint {
  if (!INTEGER.test(text)) throw new AmountError(`${field} must be a positive integer of smallest units like "12500000" (got "${truncate(text)}")`);
  const units = BigInt(text);
  if (units === 0n) throw new AmountError(`${field} must be greater than zero`);
  if (units >= MAX_WHOLE_TOKENS * 10n ** BigInt(decimals)) throw new AmountError(`${field} is too large (must be below ${MAX_WHOLE_TOKENS} whole tokens)`);
  return units;
}

/** Formats smallest units as a human decimal without trailing zeros ("12.5"). */
export function formatAmount(units: bigint, decimals: number): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const scale = 10n ** BigInt(decimals);
  const whole = abs / scale;
  const fraction = (abs % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** A non-negative decimal string (e.g. a USD price "2500.1234") as an exact rational numerator/denominator. */
export interface Decimal {
  units: bigint;
  scale: bigint;
}

export function parseDecimal(text: string): Decimal {
  const match = DECIMAL.exec(text.trim());
  if (!match) throw new AmountError(`not a non-negative decimal: "${truncate(text)}"`);
  const fraction = match[2] ?? '';
  return { units: BigInt(match[1]! + fraction), scale: 10n ** BigInt(fraction.length) };
}

export function ceilDiv(a: bigint, b: bigint): bigint {
  if (b <= 0n || a < 0n) throw new RangeError('ceilDiv expects a >= 0 and b > 0');
  return (a + b - 1n) / b;
}

function truncate(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
