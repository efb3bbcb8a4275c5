import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { amountBucket } from '../../src/privacy/anonymitySet.ts';
import { drawPrivacyPlan } from '../../src/transfers/transferService.ts';

const usdc = (whole: number) => BigInt(Math.round(whole * 1e6));

describe('amount buckets', () => {
  test('round a note value to three significant digits', () => {
    assert.equal(amountBucket(usdc(100)), usdc(100).toString());
    assert.equal(amountBucket(usdc(100.4)), usdc(100).toString());
    assert.equal(amountBucket(usdc(125.5)), usdc(126).toString());
    assert.equal(amountBucket(usdc(1234.56)), usdc(1230).toString());
    assert.equal(amountBucket(987n), '987');
    assert.equal(amountBucket(0n), '0');
    assert.equal(amountBucket(usdc(99.52)), amountBucket(usdc(99.5)));
    assert.notEqual(amountBucket(usdc(99.9)), amountBucket(usdc(99.5)));
  });

  test('a bucket is within half a unit of the third significant digit of the value', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1_000n, max: 10n ** 30n }), (value) => {
        const bucket = BigInt(amountBucket(value));
        const unit = 10n ** BigInt(value.toString().length - 3);
        assert.ok(2n * (bucket > value ? bucket - value : value - bucket) <= unit);
      }),
    );
  });
});

describe('privacy plan', () => {
  const settings = {
    delayMinSeconds: 10,
    delayMaxSeconds: 20,
    minAnonymitySet: 5,
    maxAnonymitySet: 50,
    maxWaitSeconds: 600,
    pollSeconds: 30,
    reviewTimeoutSeconds: 3600,
  };

  test('draws the delay inside the window and never lowers the service’s anonymity set', () => {
    const delays = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const plan = drawPrivacyPlan(settings, i % 2 === 0 ? 2 : 8);
      assert.ok(plan.delaySeconds >= 10 && plan.delaySeconds <= 20);
      assert.equal(plan.minAnonymitySet, i % 2 === 0 ? 5 : 8);
      delays.add(plan.delaySeconds);
    }
    assert.ok(delays.size > 5, 'the delay is random');
  });

  test('refuses an anonymity set above the configured maximum', () => {
    assert.throws(() => drawPrivacyPlan(settings, 51), /minAnonymitySet must be at most 50/);
  });
});
