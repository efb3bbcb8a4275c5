import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { explorerTxUrl, withChainDetails } from '../../src/quote/chainDetails.ts';
import type { QuoteService } from '../../src/quote/quoteService.ts';

const service = (chains: Awaited<ReturnType<QuoteService['chains']>>) => ({ chains: async () => chains }) as unknown as QuoteService;

describe('chain details', () => {
  test("the provider's explorer and currency win; the network profile fills what it leaves out", async () => {
    const wrapped = withChainDetails(
      service([
        { chainId: 1, name: 'ethereum', displayName: 'Ethereum', explorerUrl: 'https://relay-says.example', nativeCurrency: { symbol: 'ETH', decimals: 18 } },
        { chainId: 43114, name: 'avalanche', displayName: 'Avalanche' },
        { chainId: 7113001, name: 'devnet', displayName: 'Devnet' },
      ]),
      [
        { chainId: 1, explorerUrl: 'https://etherscan.io', nativeCurrency: { symbol: 'ETH', decimals: 18 } },
        { chainId: 43114, explorerUrl: 'https://snowtrace.io', nativeCurrency: { symbol: 'AVAX', decimals: 18 } },
      ],
    );
    assert.deepEqual(
      (await wrapped.chains()).map((c) => [c.chainId, c.explorerUrl, c.nativeCurrency?.symbol]),
      [
        [1, 'https://relay-says.example', 'ETH'],
        [43114, 'https://snowtrace.io', 'AVAX'],
        [7113001, undefined, undefined],
      ],
    );
  });

  const cases: [string, string | undefined, string | null, string | null][] = [
    ['a hash on a chain with an explorer', 'https://basescan.org', '0xabc', 'https://basescan.org/tx/0xabc'],
    ['a trailing slash is not doubled', 'https://basescan.org/', '0xabc', 'https://basescan.org/tx/0xabc'],
    ['no hash yet', 'https://basescan.org', null, null],
    ['a chain without an explorer (the local chains)', undefined, '0xabc', null],
  ];
  for (const [name, explorer, hash, expected] of cases) {
    test(`explorer link: ${name}`, () => assert.equal(explorerTxUrl(explorer, hash), expected));
  }
});
