import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gasCostUsd, onGrid, routeGas, STEP_GAS, stepKind } from '../../src/quote/gasCost.ts';
import { grossForServiceFee, serviceFee, usdToTokenUnits } from '../../src/money/fees.ts';
import { dailyGasUnits, runwayDays } from '../../src/observability/hotWallets.ts';
import { topUpValue } from '../../activities/gas.ts';
import { aboveCeiling, gweiToWei } from '../../src/chain/fees.ts';

describe('the service gas per route (src/quote/gasCost.ts)', () => {
  test('stepKind drops the per-route parts of a txSender step', () => {
    const cases: Array<[string, string]> = [
      ['shield', 'shield'],
      ['shield:gas:2', 'shield:gas'],
      ['bridge-in:mint:0xabc123', 'bridge-in:mint'],
      ['bridge-out:2:transfer', 'bridge-out:transfer'],
      ['bridge-in:deposit:gas:1', 'bridge-in:deposit:gas'],
    ];
    for (const [step, kind] of cases) assert.equal(stepKind(step), kind, step);
  });

  test('routeGas sums the budgets per chain; a burn-and-mint leg within the hub is no burn and no mint', () => {
    // A per-route account's steps cost their top-up, whatever they send.
    const relay = routeGas('relay', { sourceIsHub: false, destinationIsHub: false });
    assert.equal(relay.destination, 0n, "the bridge's solver pays the destination's gas in deposit-address mode");
    assert.ok(relay.hub > relay.source);
    const cctp = routeGas('cctp', { sourceIsHub: false, destinationIsHub: false });
    const cctpToHub = routeGas('cctp', { sourceIsHub: false, destinationIsHub: true });
    const cctpFromHub = routeGas('cctp', { sourceIsHub: true, destinationIsHub: false });
    assert.ok(cctp.destination > 0n, 'the service relays the mint on the destination');
    assert.equal(cctpToHub.destination, 0n);
    assert.equal(cctp.hub - cctpToHub.hub, 1_521_000n, 'paid by the withdrawal itself: no exit-account top-up');
    assert.equal(cctp.hub - cctpFromHub.hub, 200_000n, 'no mint on the hub for a deposit made there');
    assert.equal(cctpFromHub.source, 1_521_000n, 'a top-up of the deposit account for its transfer to the hub account');
    assert.equal(relay.source, 1_521_000n, "the deposit account's top-up: up to 2.5 × a step's gas, plus its own transfer");
    // Every budgeted step is one bench/gas can measure: the names are what txSender records.
    for (const mode of ['relay', 'cctp'] as const) for (const step of STEP_GAS[mode]) assert.equal(stepKind(step.step), step.step);
  });

  test('onGrid: the next value of the 1-2-5 grid', () => {
    const cases: Array<[bigint, bigint]> = [
      [0n, 0n],
      [1n, 1n],
      [2n, 2n],
      [3n, 5n],
      [6n, 10n],
      [11n, 20n],
      [4_276n, 5_000n],
      [100_000n, 100_000n],
      [100_001n, 200_000n],
      [2_500_001n, 5_000_000n],
    ];
    for (const [micros, grid] of cases) assert.equal(onGrid(micros), grid, String(micros));
  });

  test('gasCostUsd: exact wei × price / 10^18 with the buffer, rounded up to a micro-dollar, then to the grid', () => {
    const cases: Array<{ chains: Parameters<typeof gasCostUsd>[0]; bufferBps: number; usd: string }> = [
      { chains: [], bufferBps: 5000, usd: '0.000000' },
      // 1,000,000 gas at 1 gwei = 0.001 ETH, at 2500 USD = 2.5 USD, on the grid: 5 USD
      { chains: [{ gas: 1_000_000n, feePerGas: 1_000_000_000n, nativeUsd: '2500' }], bufferBps: 0, usd: '5.000000' },
      { chains: [{ gas: 1_000_000n, feePerGas: 1_000_000_000n, nativeUsd: '2000' }], bufferBps: 0, usd: '2.000000' },
      { chains: [{ gas: 1_000_000n, feePerGas: 1_000_000_000n, nativeUsd: '2000' }], bufferBps: 5000, usd: '5.000000' },
      // two chains add up; a fractional price is exact
      {
        chains: [
          { gas: 21_000n, feePerGas: 10_000_000n, nativeUsd: '2500.5' },
          { gas: 500_000n, feePerGas: 30_000_000_000n, nativeUsd: '0.25' },
        ],
        bufferBps: 0,
        usd: '0.005000',
      },
      // a dust cost still rounds up to one micro-dollar: never quoted as free
      { chains: [{ gas: 1n, feePerGas: 1n, nativeUsd: '1' }], bufferBps: 0, usd: '0.000001' },
    ];
    for (const { chains, bufferBps, usd } of cases)
      assert.equal(
        gasCostUsd(chains, bufferBps),
        usd,
        JSON.stringify(chains, (_, v) => (typeof v === 'bigint' ? String(v) : v)),
      );
  });

  test("the fee's floor is the minimum plus the gas, and grossForServiceFee inverts it", () => {
    const policy = { feeBps: 150n, feeMinUsd: '1' };
    const gas = usdToTokenUnits('3.75', '1', 6);
    assert.equal(serviceFee(100_000_000n, policy, '1', 6, gas), 4_750_000n, 'the floor wins over 1.5 % of 100');
    assert.equal(serviceFee(1_000_000_000n, policy, '1', 6, gas), 15_000_000n, '1.5 % of 1000 wins over the floor');
    for (const net of [1n, 95_250_000n, 985_000_000n, 3_000_000_000n]) {
      const gross = grossForServiceFee(net, policy, '1', 6, gas);
      assert.ok(gross - serviceFee(gross, policy, '1', 6, gas) >= net, `gross ${gross} pays ${net}`);
      assert.ok(gross - 1n - serviceFee(gross - 1n, policy, '1', 6, gas) < net, `gross ${gross} is the least for ${net}`);
    }
  });
});

describe('hot wallets: spend a day and runway (src/observability/hotWallets.ts)', () => {
  test('each route charges its payer on the chain each step runs on', () => {
    const hub = 2;
    const daily = dailyGasUnits('cctp', hub, [
      { sourceChainId: 1, destChainId: 3, routes: 2 },
      { sourceChainId: 1, destChainId: hub, routes: 1 },
    ]);
    const per = (payer: 'gas' | 'pool_relayer', destinationIsHub: boolean) => routeGas('cctp', { sourceIsHub: false, destinationIsHub }, payer);
    assert.equal(daily.get('gas|1'), 2n * per('gas', false).source + per('gas', true).source);
    assert.equal(daily.get('gas|2'), 2n * per('gas', false).hub + per('gas', true).hub);
    assert.equal(daily.get('pool_relayer|2'), 2n * per('pool_relayer', false).hub + per('pool_relayer', true).hub);
    assert.equal(daily.get('pool_relayer|3'), 2n * per('pool_relayer', false).destination, "the relayer's mints on the destination");
    assert.equal(daily.get('gas|3'), undefined, 'the gas account pays nothing on the destination');
    assert.deepEqual(dailyGasUnits('relay', hub, []), new Map());
  });

  test('runway: days the balance lasts, +Inf when nothing is spent', () => {
    assert.equal(runwayDays(10n ** 18n, 0n), Number.POSITIVE_INFINITY);
    assert.equal(runwayDays(10n ** 18n, 10n ** 17n), 10);
    assert.equal(runwayDays(10n ** 18n, 3n * 10n ** 17n), 3.33);
    assert.equal(runwayDays(0n, 1n), 0);
  });
});

describe('gas top-ups of route accounts', { timeout: 10_000 }, () => {
  test('a round value of the 1-2-5 grid that covers the step and stays within what the quotes charge', () => {
    const GWEI = 10n ** 9n;
    const needed = 600_000n * 20n * GWEI; // 0.012 ETH
    const cases: Array<[needed: bigint, balance: bigint, value: bigint]> = [
      [needed, 0n, 2n * 10n ** 16n], // ≤ 0.03 → 0.02 ETH
      [needed, 5n * 10n ** 15n, 2n * 10n ** 16n], // ≤ 0.025 → 0.02
      [needed, 11n * 10n ** 15n, 10n ** 16n], // ≤ 0.019 → 0.01
      [6n * 10n ** 12n, 0n, 10n ** 13n], // ≤ 1.5e13 → 1e13
      [10n ** 13n, 0n, 2n * 10n ** 13n], // ≤ 2.5e13 → 2e13
      [4n * 10n ** 12n, 0n, 10n ** 13n], // ≤ 1e13: exactly on the grid
    ];
    for (const [need, balance, value] of cases) {
      const sent = topUpValue(need, balance);
      assert.equal(sent, value, `needed ${need}, balance ${balance}`);
      assert.equal(onGrid(sent), sent, 'on the grid');
    }
    // Every shortfall: covered, and never above the 2.5 × the step's gas the quote charges.
    for (let n = 1n; n < 3_000n; n += 7n)
      for (const b of [0n, n / 3n, n - 1n]) {
        const sent = topUpValue(n, b);
        assert.ok(b + sent >= n, `covers ${n} from ${b}`);
        assert.ok(sent <= (5n * n) / 2n, `within the charge for ${n}`);
      }
  });
});

describe('fee ceilings (FEE_CEILING_GWEI)', { timeout: 10_000 }, () => {
  test('gwei as wei per gas; fees above the ceiling, at it, and a chain without one', () => {
    const cases: Array<[string, bigint]> = [
      ['50', 50_000_000_000n],
      ['2.5', 2_500_000_000n],
      ['0.000000001', 1n],
      ['0', 0n],
    ];
    for (const [gwei, wei] of cases) assert.equal(gweiToWei(gwei), wei, gwei);
    const eip1559 = (maxFeePerGas: bigint) => ({ type: 'eip1559' as const, maxFeePerGas, maxPriorityFeePerGas: 1n });
    assert.equal(aboveCeiling(eip1559(50_000_000_001n), gweiToWei('50')), true);
    assert.equal(aboveCeiling(eip1559(50_000_000_000n), gweiToWei('50')), false, 'at the ceiling: sent');
    assert.equal(aboveCeiling({ type: 'legacy', gasPrice: 10n ** 12n }, gweiToWei('50')), true);
    assert.equal(aboveCeiling(eip1559(10n ** 15n), undefined), false, 'no ceiling for the chain');
  });
});
