import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { Address } from 'viem';
import { formatAmount } from '../../src/money/amount.ts';
import { poolFee, serviceFee } from '../../src/money/fees.ts';
import type { BridgeQuoteRequest, BridgeToken, DepositAddressBridge } from '../../src/providers/bridge.ts';
import type { PrivacyPool } from '../../src/providers/privacyPool.ts';
import { QuoteError, createQuoteService } from '../../src/quote/quoteService.ts';

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

const fakeBridge: DepositAddressBridge = {
  listChains: async () => [1, 2, 3].map((chainId) => ({ chainId, name: `c${chainId}`, displayName: `Chain ${chainId}` })),
  listTokens: async (chainId) => [USDC(chainId), WETH(chainId)],
  quote: async (request) => ({
    requestId: null,
    depositAddress: null,
    amountIn: request.amount,
    amountOut: convert(request),
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

const quotes = createQuoteService({
  bridge: fakeBridge,
  pool: fakePool,
  hubChainId: 2,
  hubTokenSymbol: 'USDC',
  feePolicy: { feeBps: 150n, feeMinUsd: '1' },
  poolEtaSeconds: 60,
  previewAccount: `0x${'9'.repeat(40)}`,
});

/** The gross destination output computed independently of the service, hop by hop. */
function expectedGross(amount: bigint, destSymbol: 'USDC' | 'WETH'): bigint {
  const hub = convert({ originCurrency: USDC(1).address, destinationCurrency: USDC(2).address, amount } as BridgeQuoteRequest);
  const note = hub - poolFee(hub, 50);
  const exit = note - poolFee(note, 10);
  const dest = destSymbol === 'USDC' ? USDC(3) : WETH(3);
  return convert({ originCurrency: USDC(2).address, destinationCurrency: dest.address, amount: exit } as BridgeQuoteRequest);
}

describe('quote math', () => {
  test('quotedOutputAmount + feeAmount is the gross output of the path, and the fee follows the rule', async () => {
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: 2_000_000n, max: 10n ** 13n }), fc.constantFrom<'USDC' | 'WETH'>('USDC', 'WETH'), async (amount, destSymbol) => {
        const { quote } = await quotes.quote({ sourceChainId: 1, destChainId: 3, amount: formatAmount(amount, 6), destTokenSymbol: destSymbol });
        const gross = expectedGross(amount, destSymbol);
        const fee = BigInt(quote.feeAmount);
        assert.equal(BigInt(quote.quotedOutputAmount) + fee, gross);
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
});
