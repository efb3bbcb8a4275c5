import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { createPriceFeed, nextPrice, stepBps, stepIndex, walkPrice, type PriceWalkOptions } from '../../devnet/emulators/relay/priceWalk.ts';
import { formatUsdPrice, parseUsdPrice, type UsdPrice } from '../../devnet/emulators/relay/pricing.ts';

const STEP_MS = 5_000;
const START = 1_700_000_000_000;
const WALK: PriceWalkOptions = { seed: 'unit-test', stepMs: STEP_MS, volatilityBps: 10 };
const startPrices = () => new Map([...Object.entries({ USDC: '1', WETH: '2500' })].map(([symbol, text]) => [symbol, parseUsdPrice(text)]));

/** Prices at `t` as decimal strings, for readable comparisons. */
function pricesAt(walk: PriceWalkOptions | undefined, t: number, startedAt = START): Record<string, string> {
  const feed = createPriceFeed({ startPrices: startPrices(), walk, startedAt, now: () => t });
  return Object.fromEntries([...feed.pricesAt()].map(([symbol, price]) => [symbol, formatUsdPrice(price)]));
}

const asNumber = (price: UsdPrice) => Number(formatUsdPrice(price));

describe('price walk: one step', () => {
  test('d_k is an integer in [-volatility, +volatility], the same for the same (seed, symbol, k)', { timeout: 10_000 }, () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.nat(1_000_000), fc.integer({ min: 0, max: 9_999 }), (seed, symbol, k, volatility) => {
        const d = stepBps(seed, symbol, k, volatility);
        assert.ok(d >= -BigInt(volatility) && d <= BigInt(volatility), `${d} within ±${volatility}`);
        assert.equal(stepBps(seed, symbol, k, volatility), d);
      }),
    );
  });

  test('d_k takes every value of a small range, both extremes included', { timeout: 10_000 }, () => {
    const seen = new Set(Array.from({ length: 500 }, (_, k) => stepBps('s', 'WETH', k, 2)));
    assert.deepEqual(
      [...seen].sort((a, b) => Number(a - b)),
      [-2n, -1n, 0n, 1n, 2n],
    );
  });

  test('a step multiplies by (10000 + d) / 10000 exactly when 18 decimals suffice', { timeout: 10_000 }, () => {
    const cases: Array<[price: string, d: bigint, expected: string]> = [
      ['2500', 7n, '2501.75'],
      ['2500', -10n, '2497.5'],
      ['2500', 0n, '2500'],
      ['0.9998', 1n, '0.99989998'],
    ];
    for (const [price, d, expected] of cases) assert.equal(formatUsdPrice(nextPrice(parseUsdPrice(price), d)), expected);
  });

  test('a step rounds down to 18 decimals and never reaches zero', { timeout: 10_000 }, () => {
    // 1/3 · 1.0001 = 0.33336666…: 18 digits kept, the rest dropped.
    assert.equal(formatUsdPrice(nextPrice({ numerator: 1n, denominator: 3n }, 1n)), '0.333366666666666666');
    assert.equal(formatUsdPrice(nextPrice(parseUsdPrice('0.000000000000000001'), -9_999n)), '0.000000000000000001');
  });
});

describe('price walk: over time', () => {
  test('the step index counts whole steps since the start; earlier times are step 0', { timeout: 10_000 }, () => {
    assert.equal(stepIndex(START, START, STEP_MS), 0);
    assert.equal(stepIndex(START + STEP_MS - 1, START, STEP_MS), 0);
    assert.equal(stepIndex(START + STEP_MS, START, STEP_MS), 1);
    assert.equal(stepIndex(START + 7 * STEP_MS + 3, START, STEP_MS), 7);
    assert.equal(stepIndex(START - 60_000, START, STEP_MS), 0);
  });

  test('the same seed and start give the same prices; another seed gives others', { timeout: 10_000 }, () => {
    const t = START + 40 * STEP_MS;
    assert.deepEqual(pricesAt(WALK, t), pricesAt({ ...WALK }, t));
    assert.notEqual(pricesAt(WALK, t).WETH, pricesAt({ ...WALK, seed: 'another seed' }, t).WETH);
    assert.notEqual(pricesAt(WALK, t).WETH, '2500');
  });

  test('stable symbols, volatility 0 and no walk keep the starting prices', { timeout: 10_000 }, () => {
    const later = START + 1_000 * STEP_MS;
    assert.equal(pricesAt(WALK, later).USDC, '1');
    assert.deepEqual(pricesAt({ ...WALK, volatilityBps: 0 }, later), { USDC: '1', WETH: '2500' });
    assert.deepEqual(pricesAt(undefined, later), { USDC: '1', WETH: '2500' });
    assert.deepEqual(pricesAt({ ...WALK, stableSymbols: ['USDC', 'WETH'] }, later), { USDC: '1', WETH: '2500' });
    assert.notEqual(pricesAt({ ...WALK, stableSymbols: [] }, later).USDC, '1');
  });

  test('within one step the price holds; each step moves it by at most the volatility', { timeout: 10_000 }, () => {
    const feed = createPriceFeed({ startPrices: startPrices(), walk: WALK, startedAt: START, now: () => START });
    assert.deepEqual(feed.pricesAt(START + 3 * STEP_MS), feed.pricesAt(START + 4 * STEP_MS - 1));
    let previous = asNumber(feed.pricesAt(START).get('WETH')!);
    for (let k = 1; k <= 200; k++) {
      const price = asNumber(feed.pricesAt(START + k * STEP_MS).get('WETH')!);
      assert.ok(Math.abs(price / previous - 1) <= 0.001 + 1e-12, `step ${k}: ${previous} -> ${price}`);
      previous = price;
    }
  });

  test('the cached feed agrees with walking from the start, whatever order times are asked in', { timeout: 30_000 }, () => {
    const start = parseUsdPrice('2500');
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -10 * STEP_MS, max: 300 * STEP_MS }), { minLength: 1, maxLength: 12 }), (offsets) => {
        const feed = createPriceFeed({ startPrices: startPrices(), walk: WALK, startedAt: START, now: () => START });
        for (const offset of offsets) {
          const k = stepIndex(START + offset, START, STEP_MS);
          assert.deepEqual(feed.pricesAt(START + offset).get('WETH'), walkPrice('WETH', k, WALK, { k: 0, price: start }));
        }
      }),
      { numRuns: 50 },
    );
  });

  test('the feed reads its clock when no time is given', { timeout: 10_000 }, () => {
    let now = START;
    const feed = createPriceFeed({ startPrices: startPrices(), walk: WALK, startedAt: START, now: () => now });
    assert.equal(formatUsdPrice(feed.pricesAt().get('WETH')!), '2500');
    now += 25 * STEP_MS;
    assert.deepEqual(feed.pricesAt(), feed.pricesAt(START + 25 * STEP_MS));
  });

  test('rejects a step that is not positive and a volatility outside [0, 10000)', { timeout: 10_000 }, () => {
    const feed = (walk: PriceWalkOptions) => createPriceFeed({ startPrices: startPrices(), walk, startedAt: START, now: () => START });
    for (const stepMs of [0, -5, Number.NaN]) assert.throws(() => feed({ ...WALK, stepMs }), /stepMs/);
    for (const volatilityBps of [-1, 10_000, 1.5]) assert.throws(() => feed({ ...WALK, volatilityBps }), /volatilityBps/);
  });
});
