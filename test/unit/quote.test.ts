import assert from 'node:assert/strict';
import { freeNetwork } from '../../src/quote/gasCost.ts';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { Address } from 'viem';
import { formatAmount } from '../../src/money/amount.ts';
import { poolFee, serviceFee } from '../../src/money/fees.ts';
import { amountClassOf, nextAmountClass } from '../../src/privacy/amountClass.ts';
import type { BridgeQuoteRequest, BridgeToken, DepositAddressBridge } from '../../src/providers/bridge.ts';
import type { PrivacyPool } from '../../src/providers/privacyPool.ts';
import { QuoteError, createQuoteService } from '../../src/quote/quoteService.ts';
import { createInMemoryPriceEpochs } from '../../src/quote/priceEpochs.ts';

// A fake bridge with a fixed 0.1 % fee and fixed prices: enough to check the service's own math.
const USDC = (chainId: number): BridgeToken => ({ chainId, address: `0x${'1'.repeat(40)}` as Address, symbol: 'USDC', name: 'USD Coin', decimals: 6 });
const WETH = (chainId: number): BridgeToken => ({ chainId, address: `0x${'2'.repeat(40)}` as Address, symbol: 'WETH', name: 'Wrapped Ether', decimals: 18 });
const PRICES: Record<string, bigint> = { [USDC(0).address]: 1n, [WETH(0).address]: 2500n };
const decimalsOf = (address: Address) => (address === USDC(0).address ? 6 : 18);

function convert(request: BridgeQuoteRequest): bigint {
  const from = request.originCurrency;
  const to = request.destinationCurrency;
  const value = request.amount * PRICES[from]! * 10n ** BigInt(decimalsOf(to));
  return ((value / (PRICES[to]! * 10n ** BigInt(decimalsOf(from)))) * 999n) / 1000n;
}

/** The smallest input that `convert` turns into at least the request's amount (an EXACT_OUTPUT quote). */
function inputFor(request: BridgeQuoteRequest): bigint {
  const out = (amount: bigint) => convert({ ...request, amount });
  let input = 1n;
  while (out(input) < request.amount) input *= 2n;
  let low = input / 2n;
  while (input - low > 1n) {
    const middle = (low + input) / 2n;
    if (out(middle) >= request.amount) input = middle;
    else low = middle;
  }
  return input;
}

const fakeBridge: DepositAddressBridge = {
  listChains: async () => [1, 2, 3].map((chainId) => ({ chainId, name: `c${chainId}`, displayName: `Chain ${chainId}` })),
  listTokens: async (chainId) => [USDC(chainId), WETH(chainId)],
  quote: async (request) => ({
    requestId: null,
    depositAddress: null,
    amountIn: request.tradeType === 'EXACT_OUTPUT' ? inputFor(request) : request.amount,
    amountOut: request.tradeType === 'EXACT_OUTPUT' ? request.amount : convert(request),
    amountInUsd: null,
    amountOutUsd: null,
    timeEstimateSeconds: 10,
  }),
  orderStatus: async () => ({ state: 'waiting', providerStatus: 'waiting', inTxHashes: [], outTxHashes: [] }),
  tokenUsdPrice: async (_chainId, address) => String(PRICES[address]),
};
const fakePool: PrivacyPool = {
  chainId: 2,
  fees: async () => ({ depositFeeBps: 50, withdrawalFeeBps: 10, minimumDeposit: 1_000_000n }),
  deposit: async () => assert.fail('not used'),
  review: async () => assert.fail('not used'),
  reviewMany: async () => assert.fail('not used'),
  withdraw: async () => assert.fail('not used'),
  minedWithdrawal: async () => assert.fail('not used'),
  minedDeposit: async () => assert.fail('not used'),
  ragequit: async () => assert.fail('not used'),
  unspent: async () => assert.fail('not used'),
};

/** The quote service of these tests (hub chain 2, 150 bps with a 1 USD floor, hour-long epochs), `changes` aside. */
const quoteServiceWith = (changes: Partial<Parameters<typeof createQuoteService>[0]> = {}) =>
  createQuoteService({
    bridge: fakeBridge,
    pool: fakePool,
    hubChainId: 2,
    hubTokenSymbol: 'USDC',
    feePolicy: { feeBps: 150n, feeMinUsd: '1' },
    networkCosts: freeNetwork,
    priceEpochs: createInMemoryPriceEpochs({ epochSeconds: 3600, marginBps: 50 }),
    priceMarginBps: 50,
    poolEtaSeconds: 60,
    previewAccount: `0x${'9'.repeat(40)}`,
    ...changes,
  });

const quotes = quoteServiceWith();

/**
 * The gross destination output computed independently of the service, hop by hop: a USDC leg through the bridge, the
 * USDC → WETH leg at the held USD prices less the 50 bps margin (a cross-asset leg never takes the live bridge price).
 */
function expectedGross(amount: bigint, destSymbol: 'USDC' | 'WETH'): bigint {
  const hub = convert({ originCurrency: USDC(1).address, destinationCurrency: USDC(2).address, amount } as BridgeQuoteRequest);
  const note = hub - poolFee(hub, 50);
  const exit = note - poolFee(note, 10);
  if (destSymbol === 'WETH') return (exit * 10n ** 12n * 9950n) / (2500n * 10_000n);
  return convert({ originCurrency: USDC(2).address, destinationCurrency: USDC(3).address, amount: exit } as BridgeQuoteRequest);
}

describe('quote math', () => {
  test('quotedOutputAmount is the amount class of the gross output less the fee; the rounding is itemized; the fee follows the rule', async () => {
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: 2_000_000n, max: 10n ** 13n }), fc.constantFrom<'USDC' | 'WETH'>('USDC', 'WETH'), async (amount, destSymbol) => {
        const { quote } = await quotes.quote({ sourceChainId: 1, destChainId: 3, amount: formatAmount(amount, 6), destTokenSymbol: destSymbol });
        const gross = expectedGross(amount, destSymbol);
        const fee = BigInt(quote.feeAmount);
        const output = BigInt(quote.quotedOutputAmount);
        assert.equal(output, amountClassOf(gross - fee));
        assert.equal(output + fee + BigInt(quote.roundingAmount), gross);
        assert.equal(quote.amountClass.value, quote.quotedOutputAmount);
        assert.ok(quote.amountClass.roundingBps < 100);
        assert.equal(quote.amountClass.priceHeldUntil === null, destSymbol === 'USDC', 'only a cross-asset quote holds a price');
        assert.equal(fee, serviceFee(gross, { feeBps: 150n, feeMinUsd: '1' }, destSymbol === 'USDC' ? '1' : '2500', destSymbol === 'USDC' ? 6 : 18));
        assert.equal(quote.amount, amount.toString());
        assert.equal(quote.bridgeFeeAmount, '0');
        assert.equal(quote.privacyFeeAmount, '0');
        assert.ok(BigInt(quote.quotedOutputAmount) > 0n);
      }),
      { numRuns: 200 },
    );
  });

  test('an amount whose fees eat the output is refused with a clear reason', async () => {
    await assert.rejects(
      quotes.quote({ sourceChainId: 1, destChainId: 3, amount: '1.002' }),
      (error: unknown) => error instanceof QuoteError && /fees exceed the output/.test(error.message),
    );
    // below the pool's minimum deposit (1 USDC after the bridge-in)
    await assert.rejects(
      quotes.quote({ sourceChainId: 1, destChainId: 3, amount: '0.9' }),
      (error: unknown) => error instanceof QuoteError && /privacy pool takes deposits of at least 1 USDC/.test(error.message),
    );
    await assert.rejects(quotes.quote({ sourceChainId: 1, destChainId: 3, amount: '0.000001' }), QuoteError);
  });

  test('the hub token pinned by address (HUB_TOKEN_ADDRESS) is found among two tokens named USDC; an unknown one is an operator error', async () => {
    const impostor: BridgeToken = { chainId: 2, address: `0x${'3'.repeat(40)}` as Address, symbol: 'USDC', name: 'Bridged USDC', decimals: 6 };
    const twoUsdcOnTheHub: DepositAddressBridge = {
      ...fakeBridge,
      listTokens: async (chainId) => (chainId === 2 ? [impostor, USDC(2), WETH(2)] : [USDC(chainId), WETH(chainId)]),
    };
    const pinnedTo = (hubTokenAddress: Address) => quoteServiceWith({ bridge: twoUsdcOnTheHub, hubTokenAddress });
    const request = { sourceChainId: 1, destChainId: 3, amount: '100' };
    assert.equal((await pinnedTo(USDC(2).address).quote(request)).hubToken.address, USDC(2).address);
    await assert.rejects(
      pinnedTo(`0x${'4'.repeat(40)}`).quote(request),
      (error: unknown) => error instanceof QuoteError && error.code === 'UNSUPPORTED_TOKEN' && /HUB_TOKEN_ADDRESS/.test(error.message),
    );
    // By symbol alone, neither is taken for being listed first: the operator is told to pin one.
    await assert.rejects(
      quoteServiceWith({ bridge: twoUsdcOnTheHub }).quote(request),
      (error: unknown) =>
        error instanceof QuoteError &&
        error.code === 'NO_ROUTE' &&
        error.message.includes(impostor.address) &&
        error.message.includes(USDC(2).address) &&
        /send HUB_TOKEN_ADDRESS/.test(error.message),
    );
  });

  test('defaults: tokenSymbol is USDC and destTokenSymbol follows tokenSymbol', async () => {
    const a = await quotes.quote({ sourceChainId: 1, destChainId: 3, amount: '50' });
    assert.equal(a.quote.symbol, 'USDC');
    assert.equal(a.quote.destSymbol, 'USDC');
    const b = await quotes.quote({ sourceChainId: 1, destChainId: 3, amount: '0.1', tokenSymbol: 'weth' });
    assert.equal(b.quote.symbol, 'WETH');
    assert.equal(b.quote.destSymbol, 'WETH');
  });

  test('unknown chains and tokens, and hub-chain endpoints, are QuoteErrors naming the field', async () => {
    await assert.rejects(quotes.quote({ sourceChainId: 9, destChainId: 3, amount: '5' }), /sourceChainId 9 is not a supported chain/);
    await assert.rejects(quotes.quote({ sourceChainId: 1, destChainId: 9, amount: '5' }), /destChainId 9 is not a supported chain/);
    await assert.rejects(
      quotes.quote({ sourceChainId: 1, destChainId: 3, amount: '5', tokenSymbol: 'DOGE' }),
      /tokenSymbol "DOGE" is not supported on chain 1/,
    );
    await assert.rejects(quotes.quote({ sourceChainId: 1, destChainId: 3, amount: '5', destTokenSymbol: 'DOGE' }), /destTokenSymbol "DOGE"/);
    await assert.rejects(quotes.quote({ sourceChainId: 1, destChainId: 2, amount: '5' }), /hub chain/);
  });

  test('inputFor gives the smallest input whose quote reaches a class: one unit less falls short', async () => {
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: 5_000_000n, max: 10n ** 12n }), fc.constantFrom<'USDC' | 'WETH'>('USDC', 'WETH'), async (amount, destSymbol) => {
        const request = { sourceChainId: 1, destChainId: 3, amount: formatAmount(amount, 6), destTokenSymbol: destSymbol };
        const { quote } = await quotes.quote(request);
        const target = nextAmountClass(BigInt(quote.quotedOutputAmount));
        const input = await quotes.inputFor(request, target);
        const at = await quotes.quote({ ...request, amount: formatAmount(input, 6) });
        assert.equal(at.quote.quotedOutputAmount, target.toString(), 'the suggested input pays the class');
        const below = await quotes.quote({ ...request, amount: formatAmount(input - 1n, 6) });
        assert.ok(BigInt(below.quote.quotedOutputAmount) < target, 'one unit less pays a lower class');
      }),
      { numRuns: 60 },
    );
  });
});

describe('price epochs', () => {
  // A bridge whose WETH price the test moves; every quote of one amount inside an epoch must pay the same.
  let wethUsd = '2500';
  let now = new Date('2026-11-26T10:00:00Z');
  // The bridge swaps at the moving price too (its own 0.1 % fee on top), as a real one follows the market.
  const moving: DepositAddressBridge = {
    ...fakeBridge,
    tokenUsdPrice: async (_chainId, address) => (address === WETH(0).address ? wethUsd : '1'),
    quote: async (request) => {
      const fixed = await fakeBridge.quote(request);
      if (request.destinationCurrency !== WETH(0).address || request.tradeType !== 'EXACT_INPUT') return fixed;
      const [whole, fraction = ''] = wethUsd.split('.');
      const cents = BigInt(whole!) * 100n + BigInt(fraction.padEnd(2, '0').slice(0, 2));
      return { ...fixed, amountOut: (request.amount * 10n ** 12n * 100n * 999n) / (cents * 1000n) };
    },
  };
  /** The quote service over `bridge`, with hour-long epochs on the test's clock. */
  const onTheClock = (bridge: DepositAddressBridge) =>
    quoteServiceWith({ bridge, priceEpochs: createInMemoryPriceEpochs({ epochSeconds: 3600, marginBps: 50 }, () => now) });
  const epochQuotes = onTheClock(moving);
  const request = { sourceChainId: 1, destChainId: 3, amount: '100', destTokenSymbol: 'WETH' };

  test('inside an epoch the payout of an amount stays put while the price moves less than half the margin', async () => {
    const first = (await epochQuotes.quote(request)).quote;
    assert.equal(first.amountClass.priceHeldUntil, '2026-11-26T11:00:00.000Z', 'the epoch ends on the hour');
    for (const [price, minutes] of [
      ['2505', 5],
      ['2494', 20],
      ['2506.2', 59],
    ] as const) {
      wethUsd = price;
      now = new Date(Date.parse('2026-11-26T10:00:00Z') + minutes * 60_000);
      assert.equal((await epochQuotes.quote(request)).quote.quotedOutputAmount, first.quotedOutputAmount, `WETH at ${price} after ${minutes} min`);
    }
  });

  test('a new epoch starts on the clock, and early when the price moves beyond half the margin', async () => {
    wethUsd = '2500';
    now = new Date('2026-11-26T12:10:00Z');
    const held = (await epochQuotes.quote(request)).quote;
    wethUsd = '2400';
    now = new Date('2026-11-26T12:20:00Z');
    const moved = (await epochQuotes.quote(request)).quote;
    assert.ok(BigInt(moved.quotedOutputAmount) > BigInt(held.quotedOutputAmount), 'a cheaper WETH pays more WETH, from the new epoch on');
    wethUsd = '2401';
    now = new Date('2026-11-26T13:00:00Z');
    const next = (await epochQuotes.quote(request)).quote;
    assert.equal(next.amountClass.priceHeldUntil, '2026-11-26T14:00:00.000Z');
  });

  test('a quote whose held price promises more than the live bridge gives, beyond the fee, is refused', async () => {
    wethUsd = '2500';
    now = new Date('2026-11-26T15:10:00Z');
    const stingy: DepositAddressBridge = {
      ...moving,
      // A bridge that takes 3 % on the swap: more than the 1.5 % fee leaves.
      quote: async (request) => {
        const live = await moving.quote(request);
        return request.destinationCurrency === WETH(0).address ? { ...live, amountOut: (live.amountOut * 97n) / 100n } : live;
      },
    };
    await assert.rejects(onTheClock(stingy).quote(request), (error: unknown) => error instanceof QuoteError && /bridge's costs exceed/.test(error.message));
  });
});
