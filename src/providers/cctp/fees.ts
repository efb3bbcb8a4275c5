/**
 * CCTP fee math, exact and in bigint.
 *
 * Iris' GET /v2/burn/USDC/fees/{src}/{dst} returns `minimumFee` in basis points of the burned
 * amount (1 = 0.01 %), and some routes publish fractional values such as 1.3. We keep it as a
 * decimal string and compute with integers: fee = ceil(amount × bps / 10 000), rounding up so
 * the maxFee we derive is never below what the attester asks for.
 */

/** Finality thresholds of CCTP v2 (circlefin/evm-cctp-contracts/src/v2/FinalityThresholds.sol): confirmed = Fast, finalized = Standard. */
export const FINALITY_THRESHOLD = { fast: 1000, standard: 2000 } as const;

/**
 * Default maxFee buffer, in basis points of the fee: +20 %. Circle's fee guide suggests a 10–20 %
 * buffer for fee moves between the quote and the burn. A burn whose maxFee is below the live Fast
 * fee is not lost: it is attested at Standard finality instead (slower, no fee).
 */
export const DEFAULT_FEE_BUFFER_BPS = 2000;

const DECIMAL = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i;

/** A non-negative decimal (number or string, as Iris sends it) as a canonical decimal string, exactly. */
export function canonicalBps(value: number | string): string {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const match = DECIMAL.exec(text);
  if (!match || (typeof value === 'number' && !Number.isFinite(value))) throw new Error(`not a non-negative decimal: ${String(value)}`);
  const [, whole = '0', fraction = '', exponent = '0'] = match;
  // Shift the decimal point by the exponent on the digit string, never through floating point.
  const digits = `${whole}${fraction}`;
  const point = whole.length + Number(exponent);
  const padded = point <= 0 ? `${'0'.repeat(1 - point)}${digits}` : digits.padEnd(point, '0');
  const at = Math.max(point, 1);
  const intPart = padded.slice(0, at).replace(/^0+(?=\d)/, '');
  const fracPart = padded.slice(at).replace(/0+$/, '');
  return fracPart ? `${intPart}.${fracPart}` : intPart;
}

/** ceil(amount × bps / 10 000) for a decimal bps string. */
export function feeForAmount(amount: bigint, bps: string): bigint {
  if (amount < 0n) throw new Error('amount must not be negative');
  const [whole, fraction = ''] = canonicalBps(bps).split('.');
  const numerator = amount * BigInt(`${whole}${fraction}`);
  const denominator = 10_000n * 10n ** BigInt(fraction.length);
  return (numerator + denominator - 1n) / denominator;
}

/**
 * The maxFee to allow for a burn whose expected fee is `fee`: fee + ceil(fee × bufferBps / 10 000),
 * and at least fee + 1 for a Fast burn (so a fee of 0 that turns to 1 unit still goes fast). A
 * Standard burn with a fee of 0 gets a maxFee of 0.
 */
export function maxFeeFor(fee: bigint, finality: keyof typeof FINALITY_THRESHOLD, bufferBps = DEFAULT_FEE_BUFFER_BPS): bigint {
  if (!Number.isInteger(bufferBps) || bufferBps < 0) throw new Error(`fee buffer must be a non-negative integer of bps, got ${bufferBps}`);
  let buffer = (fee * BigInt(bufferBps) + 9_999n) / 10_000n;
  if (finality === 'fast' && buffer < 1n) buffer = 1n;
  return fee + buffer;
}
