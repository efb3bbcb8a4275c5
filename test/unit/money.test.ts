import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { AmountError, MAX_WHOLE_TOKENS, ceilDiv, formatAmount, parseAmount, parseDecimal } from '../../src/money/amount.ts';
import { grossForNet, poolFee, serviceFee, unitsToUsd, usdToTokenUnits } from '../../src/money/fees.ts';

const decimals = fc.integer({ min: 0, max: 24 });
const units = fc.bigInt({ min: 1n, max: 10n ** 30n });
const price = fc
  .tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 99_999_999 }))
  .filter(([whole, frac]) => whole > 0 || frac > 0)
  .map(([whole, frac]) => `${whole}.${String(frac).padStart(8, '0')}`);

describe('parseAmount / formatAmount', () => {
  test('round-trips every amount of every token precision', () => {
    fc.assert(
      fc.property(decimals, units, (d, u) => {
        fc.pre(u < MAX_WHOLE_TOKENS * 10n ** BigInt(d));
        assert.equal(parseAmount(formatAmount(u, d), d), u);
      }),
    );
  });

  test('rejects more fractional digits than the token has', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 18 }), fc.integer({ min: 1, max: 9 }), (d, extra) => {
        const text = `1.${'0'.repeat(d)}${extra}`;
        assert.throws(() => parseAmount(text, d), /decimal places but the token has only/);
      }),
    );
  });

  test('rejects zero, signs, exponents, blanks, junk and absurd sizes with a message naming the field', () => {
    for (const bad of ['0', '0.000', '-1', '+1', '1e6', '', ' 1', '1.', '.5', 'abc', '0x10', '1,5', 'Infinity', 'NaN', '1000000000000000']) {
      assert.throws(
        () => parseAmount(bad, 6),
        (error: unknown) => error instanceof AmountError && error.message.startsWith('amount'),
        `"${bad}" must be rejected`,
      );
    }
  });

  test('accepts the smallest unit and leading zeros', () => {
    assert.equal(parseAmount('0.000001', 6), 1n);
    assert.equal(parseAmount('007.5', 6), 7_500_000n);
    assert.equal(parseAmount('1', 0), 1n);
  });
});

describe('fees', () => {
  test('usdToTokenUnits never undercuts the USD amount and is the smallest such amount', () => {
    fc.assert(
      fc.property(price, fc.integer({ min: 0, max: 18 }), fc.integer({ min: 1, max: 1000 }), (p, d, usdCents) => {
        const usd = `${Math.floor(usdCents / 100)}.${String(usdCents % 100).padStart(2, '0')}`;
        const got = usdToTokenUnits(usd, p, d);
        const { units: pu, scale: ps } = parseDecimal(p);
        const { units: uu, scale: us } = parseDecimal(usd);
        // value of `got` in USD >= usd, and value of got-1 < usd (exact rationals)
        assert.ok(got * pu * us >= uu * ps * 10n ** BigInt(d));
        if (got > 0n) assert.ok((got - 1n) * pu * us < uu * ps * 10n ** BigInt(d));
      }),
    );
  });

  test('service fee is the greater of the percentage (rounded up) and the USD minimum', () => {
    fc.assert(
      fc.property(units, fc.integer({ min: 0, max: 1000 }), price, fc.integer({ min: 0, max: 18 }), (gross, bps, p, d) => {
        const fee = serviceFee(gross, { feeBps: BigInt(bps), feeMinUsd: '1' }, p, d);
        const percentage = ceilDiv(gross * BigInt(bps), 10_000n);
        const minimum = usdToTokenUnits('1', p, d);
        assert.equal(fee, percentage > minimum ? percentage : minimum);
        assert.ok(fee * 10_000n >= gross * BigInt(bps));
      }),
    );
  });

  test('defaults: 1.5 % of 100 USDC is 1.5 USDC; 10 USDC pays the 1 USD minimum', () => {
    const policy = { feeBps: 150n, feeMinUsd: '1' };
    assert.equal(serviceFee(100_000_000n, policy, '1', 6), 1_500_000n);
    assert.equal(serviceFee(10_000_000n, policy, '1', 6), 1_000_000n);
    // 1 USD of WETH at 2500 USD is 0.0004 WETH
    assert.equal(serviceFee(10n ** 15n, policy, '2500', 18), 400_000_000_000_000n);
  });

  test('pool fee floors like the contract and never exceeds the amount', () => {
    fc.assert(
      fc.property(units, fc.integer({ min: 0, max: 10_000 }), (amount, bps) => {
        const fee = poolFee(amount, bps);
        assert.equal(fee, (amount * BigInt(bps)) / 10_000n);
        assert.ok(fee <= amount);
      }),
    );
  });

  test('USD display values are exact to the cent and null without a price', () => {
    assert.equal(unitsToUsd(97_812_197n, 6, '1'), 97.81);
    assert.equal(unitsToUsd(39_124_879_206_750_000n, 18, '2500'), 97.81);
    assert.equal(unitsToUsd(1n, 6, null), null);
  });
});

describe('grossForNet (pool withdrawals)', () => {
  test('is the smallest gross whose net after the floored fee is exactly the target', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 24n }), fc.integer({ min: 0, max: 9_999 }), (net, bps) => {
        const gross = grossForNet(net, bps);
        assert.equal(gross - poolFee(gross, bps), net, 'the recipient gets exactly the target');
        assert.ok(gross - 1n - poolFee(gross - 1n, bps) < net, 'one unit less would not do');
      }),
    );
  });

  test('refuses a fee of 100 % or more', () => {
    assert.throws(() => grossForNet(1n, 10_000), RangeError);
  });
});
