import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
// @ts-expect-error: plain browser JavaScript without declarations (the tracking page has no build step).
import { exactUnits, roundedUnits } from '../../src/api/trackingPage/amounts.js';

describe("the tracking page's amounts: rounded for people, exact on demand", { timeout: 10_000 }, () => {
  test('rounded toward zero: two decimals for dollar-like tokens, at most six significant digits for others', () => {
    const cases: Array<[units: string, decimals: number, symbol: string, text: string, exact: boolean]> = [
      ['1234500000', 6, 'USDC', '1,234.5', true],
      ['1234567891', 6, 'USDC', '1,234.56', false],
      ['999999', 6, 'USDT', '0.99', false],
      ['4123', 6, 'USDC', '0.004123', true],
      ['0', 6, 'USDC', '0', true],
      ['592000000000000', 18, 'WETH', '0.000592', true],
      ['592123456789012', 18, 'WETH', '0.000592123', false],
      ['1234567890000000000000', 18, 'WETH', '1,234.56', false],
      ['12345678900000000000000000', 18, 'WETH', '12,345,678', false],
      ['1', 18, 'WETH', '0.000000000000000001', true],
      ['5', 0, 'POINTS', '5', true],
    ];
    for (const [units, decimals, symbol, text, exact] of cases) {
      assert.deepEqual(roundedUnits(units, decimals, symbol), { text, exact }, `${units} (${decimals}) ${symbol}`);
    }
  });

  test('exact: every digit, thousands grouped', () => {
    assert.equal(exactUnits('592123456789012', 18), '0.000592123456789012');
    assert.equal(exactUnits('1234567891', 6), '1,234.567891');
    assert.equal(exactUnits('1000000', 6), '1');
  });
});
