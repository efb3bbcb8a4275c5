import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type ChangeNoteFacts, gridAmountAtMost, planSweep } from '../../src/income/sweepPlan.ts';

const USDC_CENT = 10_000n;

describe('income sweeps: grid amounts', () => {
  const cases: [bigint, bigint][] = [
    [0n, 0n],
    [9_999n, 0n],
    [10_000n, 10_000n],
    [19_999n, 10_000n],
    [20_000n, 20_000n],
    [49_999n, 20_000n],
    [50_000n, 50_000n],
    [99_999n, 50_000n],
    [100_000n, 100_000n],
    [374_200n, 200_000n],
    [1_000_000n, 1_000_000n],
    [7_654_321n, 5_000_000n],
  ];
  for (const [value, expected] of cases) test(`${value} → ${expected}`, () => assert.equal(gridAmountAtMost(value, USDC_CENT), expected));

  test('never above the value, and at least 40 % of it once the value reaches a unit', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), (value) => {
        const amount = gridAmountAtMost(value, USDC_CENT);
        assert.ok(amount <= value);
        if (value >= USDC_CENT) assert.ok(amount * 5n >= value * 2n, `${amount} of ${value}`);
        else assert.equal(amount, 0n);
      }),
    );
  });
});

describe('income sweeps: which notes, when', () => {
  const day = 86_400;
  const now = 100 * day;
  const note = (routeId: string, value: bigint, ageDays: number, generation = 1): ChangeNoteFacts => ({
    routeId,
    generation,
    asset: '0xusdc',
    value,
    leftAt: now - ageDays * day,
  });
  const settings = { gridUnit: USDC_CENT, minAmount: 50_000n, minAgeSeconds: 3 * day, minBatch: 3 };

  test('too young, or worth less than the smallest sweep: nothing is due', () => {
    assert.deepEqual(planSweep([note('a', 900_000n, 1), note('b', 40_000n, 10)], now, settings), { sweeps: [], reason: 'nothing-due', due: 0 });
  });
  test('fewer routes due than a batch: all of them wait', () => {
    assert.deepEqual(planSweep([note('a', 900_000n, 5), note('b', 700_000n, 5), note('a', 300_000n, 9, 2)], now, settings), {
      sweeps: [],
      reason: 'batch-too-small',
      due: 3,
    });
  });
  test('a batch: every due note, each a grid amount of it; the young and the small ones stay', () => {
    const plan = planSweep(
      [note('a', 900_000n, 5), note('b', 733_000n, 4), note('c', 60_000n, 30), note('d', 5_000_000n, 1), note('e', 10_000n, 9)],
      now,
      settings,
    );
    assert.equal(plan.reason, 'batch');
    assert.deepEqual(
      plan.sweeps.map((s) => [s.routeId, s.amount]),
      [
        ['a', 500_000n],
        ['b', 500_000n],
        ['c', 50_000n],
      ],
    );
  });
});
