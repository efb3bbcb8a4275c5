import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { outputBeforePartnerFee, partnerFeeOf, partnerFeeReserve } from '../../src/quote/partnerFees.ts';

describe('partner fees', () => {
  const fees: [bigint, number, bigint][] = [
    [1_000_000n, 100, 10_000n],
    [1_000_001n, 100, 10_001n],
    [1n, 1, 1n],
    [0n, 100, 0n],
    [123_456_789n, 0, 0n],
    [10n ** 18n, 500, 5n * 10n ** 16n],
  ];
  for (const [output, bps, expected] of fees) {
    test(`${bps} bps of ${output} is ${expected} (rounded up)`, { timeout: 5_000 }, () => assert.equal(partnerFeeOf(output, bps), expected));
  }

  test('outputBeforePartnerFee is the smallest output that leaves at least the net after the fee', { timeout: 30_000 }, () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 24n }), fc.integer({ min: 0, max: 500 }), (net, bps) => {
        const before = outputBeforePartnerFee(net, bps);
        assert.ok(before - partnerFeeOf(before, bps) >= net, 'enough');
        assert.ok(before === net || before - 1n - partnerFeeOf(before - 1n, bps) < net, 'the smallest');
      }),
      { numRuns: 2_000 },
    );
  });

  const reserves: [string, bigint, bigint, bigint, bigint][] = [
    ['no partner fee keeps nothing', 0n, 99_000_000n, 98_000_000n, 0n],
    ['one for one (same asset): the fee itself', 500_000n, 100_000_000n, 100_000_000n, 500_000n],
    ['a dearer order keeps more, rounded up', 500_000n, 101_000_001n, 100_000_000n, 505_001n],
    ['6-decimal hub, 18-decimal output (WETH): converted at the order rate', 10n ** 15n, 3_000_000n, 10n ** 18n, 3_000n],
  ];
  for (const [name, fee, input, output, expected] of reserves) {
    test(`the partner's reserve in a note: ${name}`, { timeout: 5_000 }, () => assert.equal(partnerFeeReserve(fee, input, output), expected));
  }
});
