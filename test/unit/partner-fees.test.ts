import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { outputBeforePartnerFee, partnerFeeOf } from '../../src/quote/partnerFees.ts';

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
});
