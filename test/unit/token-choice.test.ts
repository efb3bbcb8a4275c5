import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AmountError, parseSmallestUnits } from '../../src/money/amount.ts';
import type { BridgeToken } from '../../src/providers/bridge.ts';
import { pairKey, requestedAmount, requestedTokens, type TransferRequest } from '../../src/quote/quoteService.ts';
import { matchesTokenSearch, pickToken, type TokenChoice } from '../../src/quote/tokenChoice.ts';

const token = (symbol: string, name: string, digit: string): BridgeToken => ({
  chainId: 42161,
  address: `0x${digit.repeat(40)}`,
  symbol,
  name,
  decimals: 6,
});
const USDC = token('USDC', 'USD Coin', 'a');
/** Bridged USDC whose on-chain symbol() is "USDC" too, as on chains that kept the bridged token. */
const USDC_E = token('USDC', 'Bridged USDC', 'b');
const WETH = token('WETH', 'Wrapped Ether', 'c');
const TUSD = token('TUSD', 'TrueUSD', 'd');
const TUSD_LOWER = token('tusd', 'Another TUSD', 'e');
const CATALOGUE = [USDC, USDC_E, WETH, TUSD, TUSD_LOWER];
const CHAIN = { chainId: 42161, displayName: 'Arbitrum' };
const FIELDS = { symbol: 'tokenSymbol', address: 'tokenAddress' };

describe('pickToken: the one token a request names', () => {
  const cases: { name: string; choice: TokenChoice; expected: BridgeToken | { code: string; message: RegExp } }[] = [
    { name: 'a unique symbol, any case', choice: { symbol: 'weth' }, expected: WETH },
    { name: 'an address, any case', choice: { address: USDC_E.address.toUpperCase().replace('0X', '0x') }, expected: USDC_E },
    { name: 'an address and its own symbol', choice: { symbol: 'usdc', address: USDC_E.address }, expected: USDC_E },
    {
      name: 'a symbol two tokens share: refused, listing both with their addresses',
      choice: { symbol: 'USDC' },
      expected: {
        code: 'AMBIGUOUS_TOKEN',
        message: new RegExp(
          `^tokenSymbol "USDC" names 2 tokens on chain 42161 \\(Arbitrum\\): USDC \\(USD Coin\\) ${USDC.address}, USDC \\(Bridged USDC\\) ${USDC_E.address}; send tokenAddress`,
        ),
      },
    },
    {
      name: 'symbols equal but for case are a collision too',
      choice: { symbol: 'TUSD' },
      expected: { code: 'AMBIGUOUS_TOKEN', message: new RegExp(`TUSD \\(TrueUSD\\) ${TUSD.address}, tusd \\(Another TUSD\\) ${TUSD_LOWER.address}`) },
    },
    {
      name: 'an unknown symbol',
      choice: { symbol: 'DOGE' },
      expected: { code: 'UNSUPPORTED_TOKEN', message: /^tokenSymbol "DOGE" is not supported on chain 42161/ },
    },
    {
      name: 'an unknown address',
      choice: { address: `0x${'f'.repeat(40)}` },
      expected: { code: 'UNSUPPORTED_TOKEN', message: /^tokenAddress 0xf{40} is not a supported token on chain 42161 \(Arbitrum\)/ },
    },
    {
      name: 'an address and another token’s symbol',
      choice: { symbol: 'WETH', address: USDC.address },
      expected: { code: 'TOKEN_MISMATCH', message: /^tokenSymbol "WETH" disagrees with tokenAddress 0xa{40}, which is USDC/ },
    },
  ];
  for (const { name, choice, expected } of cases) {
    test(name, () => {
      const picked = pickToken(CATALOGUE, choice, FIELDS, CHAIN);
      if ('chainId' in expected) {
        assert.deepEqual(picked, { token: expected });
        return;
      }
      assert.ok('problem' in picked, `expected ${expected.code}, got a token`);
      assert.equal(picked.problem.code, expected.code);
      assert.match(picked.problem.message, expected.message);
    });
  }

  test('the first token of a symbol no longer wins: the answer does not depend on the catalogue’s order', () => {
    for (const catalogue of [CATALOGUE, [...CATALOGUE].reverse()]) {
      const picked = pickToken(catalogue, { symbol: 'usdc' }, FIELDS, CHAIN);
      assert.ok('problem' in picked && picked.problem.code === 'AMBIGUOUS_TOKEN');
    }
  });
});

describe('matchesTokenSearch', () => {
  const cases: [string | undefined, BridgeToken, boolean][] = [
    [undefined, WETH, true],
    ['  ', WETH, true],
    ['eth', WETH, true],
    ['wrapped', WETH, true],
    ['usd', WETH, false],
    [USDC_E.address.toUpperCase().replace('0X', '0x'), USDC_E, true],
    [USDC_E.address, USDC, false],
  ];
  for (const [search, t, expected] of cases)
    test(`${JSON.stringify(search)} on ${t.symbol} ${t.address.slice(0, 6)}: ${expected}`, () => assert.equal(matchesTokenSearch(t, search), expected));
});

describe('requestedAmount: exactly one of amount and amountSmallestUnits', () => {
  const cases: { name: string; request: Pick<TransferRequest, 'amount' | 'amountSmallestUnits'>; decimals: number; expected: bigint | RegExp }[] = [
    { name: 'decimal whole tokens', request: { amount: '12.5' }, decimals: 6, expected: 12_500_000n },
    { name: 'the same in smallest units', request: { amountSmallestUnits: '12500000' }, decimals: 6, expected: 12_500_000n },
    { name: 'one smallest unit of an 18-decimal token', request: { amountSmallestUnits: '1' }, decimals: 18, expected: 1n },
    {
      name: 'both',
      request: { amount: '12.5', amountSmallestUnits: '12500000' },
      decimals: 6,
      expected: /either amount .* or amountSmallestUnits .*, not both/,
    },
    { name: 'neither', request: {}, decimals: 6, expected: /amount is required .*or amountSmallestUnits/ },
    {
      name: 'a decimal point in smallest units',
      request: { amountSmallestUnits: '12.5' },
      decimals: 6,
      expected: /amountSmallestUnits must be a positive integer/,
    },
    { name: 'a sign', request: { amountSmallestUnits: '-5' }, decimals: 6, expected: /amountSmallestUnits must be a positive integer/ },
    { name: 'an exponent', request: { amountSmallestUnits: '1e6' }, decimals: 6, expected: /amountSmallestUnits must be a positive integer/ },
    { name: 'zero', request: { amountSmallestUnits: '000' }, decimals: 6, expected: /amountSmallestUnits must be greater than zero/ },
    { name: 'absurdly large', request: { amountSmallestUnits: `1${'0'.repeat(21)}` }, decimals: 6, expected: /amountSmallestUnits is too large/ },
  ];
  for (const { name, request, decimals, expected } of cases) {
    test(name, () => {
      if (typeof expected === 'bigint') assert.equal(requestedAmount(request, decimals), expected);
      else
        assert.throws(
          () => requestedAmount(request, decimals),
          (error: unknown) => error instanceof AmountError && expected.test(error.message),
        );
    });
  }

  test('parseSmallestUnits takes up to just below the whole-token maximum', () => {
    assert.equal(parseSmallestUnits(`${'9'.repeat(21)}`, 6), 10n ** 21n - 1n);
  });
});

describe('requestedTokens and pairKey', () => {
  test('defaults: USDC at the source unless an address is given; the destination follows the source', () => {
    assert.deepEqual(requestedTokens({}), {
      source: { symbol: 'USDC', address: undefined },
      dest: { symbol: undefined, address: undefined },
      destSameAsSource: true,
    });
    assert.deepEqual(requestedTokens({ tokenAddress: USDC.address }).source, { symbol: undefined, address: USDC.address });
    assert.equal(requestedTokens({ destTokenAddress: WETH.address }).destSameAsSource, false);
  });

  test('pairKey: spellings of one request share a key; another token or address does not', () => {
    const base = { sourceChainId: 1, destChainId: 3 };
    assert.equal(pairKey({ ...base }), pairKey({ ...base, tokenSymbol: 'usdc', destTokenSymbol: 'USDC' }));
    assert.equal(pairKey({ ...base, tokenAddress: USDC.address }), pairKey({ ...base, tokenAddress: USDC.address.toUpperCase().replace('0X', '0x') }));
    assert.notEqual(pairKey({ ...base, tokenAddress: USDC.address }), pairKey({ ...base, tokenAddress: USDC_E.address }));
    assert.notEqual(pairKey({ ...base }), pairKey({ ...base, destTokenAddress: WETH.address }));
  });
});
