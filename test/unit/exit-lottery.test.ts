import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { kendallTau, simulate } from '../../bench/exits/simulate.ts';
import type { PoolStateView } from '../../src/privacy/anonymitySet.ts';
import type { ClassNote } from '../../src/privacy/classSets.ts';
import {
  classEpoch,
  classTarget,
  drawExit,
  type ExitLotteryRules,
  expectedLotterySeconds,
  meanWaitEpochs,
  trafficWindow,
} from '../../src/privacy/exitLottery.ts';
import { decideGates } from '../../src/privacy/gate.ts';

const rules: ExitLotteryRules = { epochSeconds: 600, meanMinSeconds: 1800, meanMaxSeconds: 3600, flushSeconds: 14_400, trafficWindowSeconds: 86_400 };

describe('exit lottery', () => {
  test('the mean wait follows the class’s traffic and target, between its bounds', () => {
    // 144 epochs of 10 minutes in a day.
    const table: Array<[string, number, number, number]> = [
      ['routes that ask for nobody but themselves leave in the next epoch', 1, 0, 1],
      ['a quiet class waits the longest mean', 5, 0, 6],
      ['one entry an epoch, a set of 5: four epochs for four others to come', 5, 144, 4],
      ['a busy class still waits the shortest mean', 5, 10_000, 3],
      ['one entry an hour, a set of 3: capped at the longest mean', 3, 24, 6],
    ];
    for (const [what, target, entries, epochs] of table) assert.equal(meanWaitEpochs(rules, target, entries), epochs, what);
    assert.equal(expectedLotterySeconds(rules, 5, 144), 2400, 'four epochs of ten minutes from the gate');
  });

  test('the class’s target is the median of what its open routes asked for', () => {
    const table: Array<[number[], number]> = [
      [[], 1],
      [[3], 3],
      [[1, 3, 5], 3],
      [[3, 3, 50], 3],
      [[1, 50], 1],
    ];
    for (const [minimums, target] of table) assert.equal(classTarget(minimums), target, JSON.stringify(minimums));
  });

  test('the traffic window ends as the epoch before begins: every pass that draws for an epoch counts the same entries', () => {
    assert.deepEqual(trafficWindow(rules, 10 * 600_000), { from: 9 * 600_000 - 86_400_000, to: 9 * 600_000 });
  });

  test('a class flushes once a gate that may still be open is PRIVACY_EXIT_FLUSH_SECONDS old', () => {
    const at = 100 * 600_000;
    const table: Array<[string, number | null, boolean]> = [
      ['no gate open', null, false],
      ['the oldest open gate is 3 h 50 min old', at - 13_800_000, false],
      ['the oldest open gate is 4 h old', at - 14_400_000, true],
    ];
    for (const [what, oldestOpenGateAt, flush] of table) {
      const epoch = classEpoch(rules, 'c', at, { entries: 0, target: 5, oldestOpenGateAt });
      assert.equal(epoch.flush, flush, what);
      assert.equal(epoch.chance, flush ? 1 : 1 / 6, what);
    }
  });

  test('draws: the same for a seed and an epoch, independent across epochs, at the class’s chance, at a moment inside the epoch', () => {
    const epoch = classEpoch(rules, 'c', 600_000, { entries: 144, target: 5, oldestOpenGateAt: null });
    assert.deepEqual(drawExit(epoch, 'seed-1', 600), drawExit(epoch, 'seed-1', 600), 'every pass and replica draws the same');
    let left = 0;
    const seeds = 20_000;
    for (let i = 0; i < seeds; i++) {
      const exit = drawExit(epoch, `seed-${i}`, 600);
      if (!exit) continue;
      left++;
      assert.ok(exit.at >= 600_000 && exit.at < 1_200_000, 'inside the epoch');
    }
    // Chance 1/4: 5,000 expected, standard deviation about 61.
    assert.ok(Math.abs(left - seeds / 4) < 300, `${left} of ${seeds} left`);
    const flush = classEpoch(rules, 'c', 600_000, { entries: 0, target: 5, oldestOpenGateAt: 600_000 - 14_400_000 });
    for (let i = 0; i < 100; i++) assert.ok(drawExit(flush, `seed-${i}`, 600), 'a flush lets every gated note out');
  });
});

describe('privacy gate', () => {
  const state: PoolStateView = { inState: () => true, approved: () => true };
  const note = (routeId: string, over: Partial<ClassNote> = {}): ClassNote => ({
    routeId,
    amountClass: 'c',
    commitment: routeId,
    label: routeId,
    value: 100n,
    client: routeId,
    sender: null,
    ragequit: false,
    depositedAt: 0,
    approvedAt: 0,
    gatedAt: null,
    withdrawnAt: null,
    members: null,
    provedLeaves: null,
    exitEpochAt: null,
    exitAt: null,
    ...over,
  });
  const gateRules = { epochSeconds: 3, maxWaitSeconds: 30, minPeerAgeSeconds: 0 };
  const decide = (notes: ClassNote[], minimums: Record<string, number>, now = 1_000) =>
    Object.fromEntries(decideGates({ notes, state, now, rules: gateRules, minimumOf: (id) => minimums[id] ?? 1 }).map((d) => [d.routeId, d.opens]));

  test('a cohort opens together once each would reach its minimum with the others', () => {
    const four = ['a', 'b', 'c', 'd'].map((id) => note(id));
    assert.deepEqual(decide(four.slice(0, 3), { a: 3, b: 3, c: 3 }), { a: null, b: null, c: null }, 'three clients: 2 once any one is the observer');
    assert.deepEqual(decide(four, { a: 3, b: 3, c: 3, d: 3 }), { a: 'set-reached', b: 'set-reached', c: 'set-reached', d: 'set-reached' });
    assert.deepEqual(
      decide(four, { a: 3, b: 3, c: 3, d: 50 }),
      { a: null, b: null, c: null, d: null },
      'a waiter drops out of the cohort, and with it the others’ third peer',
    );
  });

  test('gates wait for approval and age, and open at the longest wait whatever the set', () => {
    const aged = { ...gateRules, minPeerAgeSeconds: 10 };
    const young = decideGates({ notes: [note('a', { depositedAt: 0 })], state, now: 1_000, rules: aged, minimumOf: () => 1 });
    assert.deepEqual(young, [], 'not in the pool 10 s by the next epoch: not ready');
    assert.deepEqual(decide([note('a', { approvedAt: null })], {}), {}, 'not yet seen approved');
    assert.deepEqual(decide([note('a')], { a: 3 }, 26_000), { a: null }, 'the next epoch starts at 27 s: its longest wait ends at 30 s');
    assert.deepEqual(decide([note('a')], { a: 3 }, 27_000), { a: 'max-wait' });
    assert.deepEqual(decide([note('a', { gatedAt: 3_000 })], { a: 3 }), {}, 'a gate never closes, nor opens twice');
  });
});

describe('exit order', () => {
  test('Kendall tau: 1 for the same order, −1 reversed', () => {
    assert.equal(kendallTau(['a', 'b', 'c'], ['a', 'b', 'c']), 1);
    assert.equal(kendallTau(['a', 'b', 'c'], ['c', 'b', 'a']), -1);
    assert.equal(kendallTau(['a', 'b', 'c', 'd'], ['b', 'a', 'd', 'c']), 1 / 3);
  });

  test('routes that entered one by one leave in an order that forgets it (simulated, the local stack’s rules)', () => {
    const simRules = {
      epochSeconds: 3,
      meanMinSeconds: 9,
      meanMaxSeconds: 45,
      flushSeconds: 180,
      trafficWindowSeconds: 432,
      maxWaitSeconds: 90,
      minPeerAgeSeconds: 0,
      pollSeconds: 1,
      reviewSeconds: 1,
      proofSeconds: 2,
    };
    const taus: number[] = [];
    for (let run = 0; run < 20; run++) {
      let at = 1_800_000_000_000 + run * 3_600_000;
      const arrivals = Array.from({ length: 16 }, (_, i) => ({ at: (at += 750 + ((i * 7919 + run * 104_729) % 750)), client: `user${i}`, minimum: 3 }));
      const result = simulate(simRules, arrivals);
      const entered = [...result.routes].sort((a, b) => a.enteredAt - b.enteredAt).map((r) => r.routeId);
      taus.push(
        kendallTau(
          entered,
          result.withdrawals.map((w) => w.routeId),
        ),
      );
    }
    const mean = taus.reduce((a, b) => a + b, 0) / taus.length;
    // Leaving in the next epoch after their gates, as before the lottery, they kept their order: tau about 0.8.
    assert.ok(mean < 0.25, `mean tau ${mean.toFixed(2)} over 20 runs: ${taus.map((t) => t.toFixed(2)).join(' ')}`);
  });
});
