/**
 * Amount classes: the public grid of values every payout (`quotedOutputAmount`) is rounded down to, so that routes
 * of one class pay, and withdraw from the pool, exactly the same amounts whatever their inputs were
 * (docs/privacy.md, "Amount classes").
 *
 * The grid is scale-free, in the destination token's smallest units: a value's three leading digits (its mantissa,
 * 100–999) are rounded down to a step of 1 below 200, 2 below 500 and 5 from 500 on, and the rest of its digits
 * become zeros. So for USDC (6 decimals): 98.37 → 98.0, 123.456 → 123, 249.9 → 248, 1,234.5 → 1,230, 0.5037 → 0.5. Every step is
 * between 0.4 % and 1 % of the value: the rounding costs a user less than 1 % (about 0.35 % on average), and the
 * grid has 350 classes a decade instead of 900 (three plain significant digits), so classes are wider and fuller.
 * Values below 1,000 smallest units are each their own class (dust: no route pays so little).
 */

const MANTISSA_DIGITS = 3;

/** The step of a three-digit mantissa (100–999). */
function stepOf(mantissa: bigint): bigint {
  if (mantissa < 200n) return 1n;
  if (mantissa < 500n) return 2n;
  return 5n;
}

/** The class `value` falls into: the largest grid value not above it. */
export function amountClassOf(value: bigint): bigint {
  if (value < 0n) throw new RangeError('an amount class needs a non-negative value');
  const digits = value.toString().length;
  if (digits <= MANTISSA_DIGITS) return value;
  const scale = 10n ** BigInt(digits - MANTISSA_DIGITS);
  const mantissa = value / scale;
  const step = stepOf(mantissa);
  return (mantissa / step) * step * scale;
}

/** Whether `value` is itself a grid value. */
export function isAmountClass(value: bigint): boolean {
  return value >= 0n && amountClassOf(value) === value;
}

/** The smallest grid value above `classValue` (itself a grid value). */
export function nextAmountClass(classValue: bigint): bigint {
  if (!isAmountClass(classValue)) throw new RangeError(`${classValue} is not an amount class`);
  const digits = classValue.toString().length;
  if (digits <= MANTISSA_DIGITS) return classValue + 1n;
  const scale = 10n ** BigInt(digits - MANTISSA_DIGITS);
  return classValue + stepOf(classValue / scale) * scale;
}

/** The largest grid value below `classValue`, or null below the smallest (0). */
export function previousAmountClass(classValue: bigint): bigint | null {
  if (!isAmountClass(classValue)) throw new RangeError(`${classValue} is not an amount class`);
  return classValue === 0n ? null : amountClassOf(classValue - 1n);
}

/** What rounding `value` down to its class costs, in whole basis points of `value` (rounded down: 0 to 99). */
export function roundingBps(value: bigint): number {
  if (value <= 0n) return 0;
  return Number(((value - amountClassOf(value)) * 10_000n) / value);
}

/**
 * The key that groups routes into one class in the pool: the destination (chain and token) and the class value.
 * Routes to different destinations, or of different classes, withdraw different amounts and so never hide each other.
 */
export function amountClassKey(destChainId: number, destToken: string, classValue: bigint): string {
  return `${destChainId}:${destToken.toLowerCase()}:${classValue}`;
}
