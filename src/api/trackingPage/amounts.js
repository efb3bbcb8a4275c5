/**
 * Amounts for people, served as /t/amounts.js to the tracking page (app.js) and table-tested in
 * test/unit/tracking-amounts.test.ts. Plain browser JavaScript, no dependency; bigint arithmetic throughout (a float
 * would round large amounts).
 */

/** Tokens worth about a dollar: shown with two decimals, as people write dollars. */
const USD_LIKE = /^(USDC|USDT|DAI|USDC\.E|USDBC|PYUSD|FRAX|LUSD|GHO)$/i;

/** Significant digits shown of any other token (never fewer than its whole part). */
const SIGNIFICANT_DIGITS = 6;

const groupThousands = (whole) => whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** A non-negative number of units with `places` decimals written out: "1,234.5" (trailing zeros dropped). */
function written(units, places) {
  const base = 10n ** BigInt(places);
  const whole = groupThousands((units / base).toString());
  const fraction = places > 0 ? (units % base).toString().padStart(places, '0').replace(/0+$/, '') : '';
  return fraction ? `${whole}.${fraction}` : whole;
}

/**
 * `units`, an integer string of a token's smallest units, as a decimal with `decimals` places, every digit kept:
 * exactUnits('1234500000', 6) is '1,234.5'.
 */
export function exactUnits(units, decimals) {
  return written(BigInt(units), decimals);
}

/**
 * `units` rounded for reading, toward zero (a rounded amount never claims more than there is): two decimals for a
 * dollar-like token, else at most six significant digits. An amount that would round to zero keeps its first
 * significant digits instead ("0.004 USDC", not "0 USDC"). Returns the text and whether it is exact.
 */
export function roundedUnits(units, decimals, symbol) {
  const value = BigInt(units);
  const exact = written(value, decimals);
  if (value === 0n) return { text: '0', exact: true };
  const digits = value.toString().length;
  // The decimals a dollar-like token shows, or as many as leave six significant digits (never fewer than none).
  let places = USD_LIKE.test(symbol ?? '') ? Math.min(2, decimals) : Math.max(0, Math.min(decimals, SIGNIFICANT_DIGITS - (digits - decimals)));
  // Too small for those places: keep its first significant digits.
  if (value < 10n ** BigInt(decimals - places)) places = Math.min(decimals, decimals - digits + SIGNIFICANT_DIGITS);
  const cut = 10n ** BigInt(decimals - places);
  const text = written((value / cut) * cut, decimals);
  return { text, exact: text === exact };
}
