import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { withAmountLimits } from '../../src/quote/amountLimits.ts';
import { QuoteError, type QuoteService, type ResolvedQuote, type TransferRequest } from '../../src/quote/quoteService.ts';
import { parseAmount } from '../../src/money/amount.ts';

const usdc = { chainId: 1, address: `0x${'1'.repeat(40)}` as Address, symbol: 'USDC', name: 'USD Coin', decimals: 6 };
const request = (amount: string): TransferRequest => ({ sourceChainId: 1, destChainId: 3, amount });

/** A quote service whose pair takes at least 2.5 USDC: below it, it refuses as the real ones do. */
function fakeService(calls: { inputFor: number }): QuoteService {
  return {
    chains: async () => [],
    tokens: async () => [],
    async inputFor() {
      calls.inputFor++;
      return 2_500_000n;
    },
    async quote(r) {
      const amount = parseAmount(r.amount ?? '', 6);
      if (amount < 2_500_000n)
        throw new QuoteError(`amount ${r.amount} USDC is too small: the fees exceed the output`, { code: 'INVALID_AMOUNT', limit: 'min', sourceToken: usdc });
      return { sourceToken: usdc, hubToken: usdc, destToken: usdc, quote: { amount: amount.toString() } } as unknown as ResolvedQuote;
    },
  };
}

describe('the pair limits of a quote', () => {
  const cases: {
    name: string;
    maxTransferUsd: string | null;
    price: string | null;
    amount: string;
    expected: { minAmount: string; maxAmount: string | null } | RegExp;
  }[] = [
    { name: 'within both', maxTransferUsd: '1000', price: '1', amount: '10', expected: { minAmount: '2500000', maxAmount: '1000000000' } },
    { name: 'at the maximum', maxTransferUsd: '1000', price: '1', amount: '1000', expected: { minAmount: '2500000', maxAmount: '1000000000' } },
    {
      name: 'above the maximum',
      maxTransferUsd: '1000',
      price: '1',
      amount: '1000.000001',
      expected: /too large: the service takes at most 1000 USDC per transfer/,
    },
    {
      name: 'a dearer token has a smaller maximum, rounded down',
      maxTransferUsd: '1000',
      price: '3',
      amount: '10',
      expected: { minAmount: '2500000', maxAmount: '333333333' },
    },
    { name: 'no maximum configured', maxTransferUsd: null, price: '1', amount: '1000000', expected: { minAmount: '2500000', maxAmount: null } },
    {
      name: 'no price: refused rather than unlimited',
      maxTransferUsd: '1000',
      price: null,
      amount: '10',
      expected: /no USD price for USDC on chain 1; the service's maximum/,
    },
    {
      name: 'below the minimum: the refusal says the minimum',
      maxTransferUsd: '1000',
      price: '1',
      amount: '1',
      expected: /too small: the fees exceed the output; the smallest amount this pair takes now is 2.5 USDC/,
    },
  ];
  for (const { name, maxTransferUsd, price, amount, expected } of cases) {
    test(name, { timeout: 5_000 }, async () => {
      const service = withAmountLimits(fakeService({ inputFor: 0 }), { maxTransferUsd, usdPrice: async () => price });
      if (expected instanceof RegExp) {
        await assert.rejects(service.quote(request(amount)), (error: unknown) => error instanceof QuoteError && expected.test(error.message));
        return;
      }
      const { quote } = await service.quote(request(amount));
      assert.deepEqual({ minAmount: quote.minAmount, maxAmount: quote.maxAmount }, expected);
    });
  }

  test('the minimum is computed once per pair while it is fresh, whatever the amount', { timeout: 5_000 }, async () => {
    const calls = { inputFor: 0 };
    const service = withAmountLimits(fakeService(calls), { maxTransferUsd: null, usdPrice: async () => '1' });
    await Promise.all(['10', '20', '30'].map((amount) => service.quote(request(amount))));
    await service.quote({ ...request('10'), tokenSymbol: 'usdc' });
    assert.equal(calls.inputFor, 1);
    await service.quote({ ...request('10'), destChainId: 4 });
    assert.equal(calls.inputFor, 2, 'another pair has its own');
  });
});
