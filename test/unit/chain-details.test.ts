import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { explorerTxUrl, safeExplorerUrl, withChainDetails } from '../../src/quote/chainDetails.ts';
import type { QuoteService } from '../../src/quote/quoteService.ts';

const service = (chains: Awaited<ReturnType<QuoteService['chains']>>) => ({ chains: async () => chains }) as unknown as QuoteService;
const HASH = `0x${'ab'.repeat(32)}`;

describe('chain details', () => {
  test("the network profile's explorer and currency win; the provider's fill what it leaves out, when safe", { timeout: 5_000 }, async () => {
    const wrapped = withChainDetails(
      service([
        { chainId: 1, name: 'ethereum', displayName: 'Ethereum', explorerUrl: 'https://relay-says.example', nativeCurrency: { symbol: 'XETH', decimals: 18 } },
        { chainId: 43114, name: 'avalanche', displayName: 'Avalanche' },
        { chainId: 8453, name: 'base', displayName: 'Base', explorerUrl: 'https://basescan.org/', nativeCurrency: { symbol: 'ETH', decimals: 18 } },
        { chainId: 666, name: 'evil', displayName: 'Evil', explorerUrl: 'javascript:alert(1)' },
        { chainId: 7113001, name: 'devnet', displayName: 'Devnet' },
      ]),
      [
        { chainId: 1, explorerUrl: 'https://etherscan.io', nativeCurrency: { symbol: 'ETH', decimals: 18 }, confirmations: 12 },
        { chainId: 43114, explorerUrl: 'https://snowtrace.io', nativeCurrency: { symbol: 'AVAX', decimals: 18 }, confirmations: 1 },
      ],
    );
    assert.deepEqual(
      (await wrapped.chains()).map((c) => [c.chainId, c.explorerUrl, c.nativeCurrency?.symbol]),
      [
        [1, 'https://etherscan.io', 'ETH'],
        [43114, 'https://snowtrace.io', 'AVAX'],
        [8453, 'https://basescan.org', 'ETH'],
        [666, undefined, undefined],
        [7113001, undefined, undefined],
      ],
    );
  });

  const explorers: [string, string | undefined, string | undefined][] = [
    ['an https origin', 'https://basescan.org', 'https://basescan.org'],
    ['a trailing slash is dropped', 'https://basescan.org/', 'https://basescan.org'],
    ['a path is kept', 'https://explorer.example/mainnet/', 'https://explorer.example/mainnet'],
    ['http on loopback', 'http://localhost:4000', undefined],
    ['http elsewhere', 'http://basescan.org', undefined],
    ['javascript:', 'javascript:alert(1)', undefined],
    ['data:', 'data:text/html,hi', undefined],
    ['credentials', 'https://user:pw@basescan.org', undefined],
    ['a query', 'https://basescan.org/?ref=x', undefined],
    ['a fragment', 'https://basescan.org/#x', undefined],
    ['not a URL', 'basescan.org', undefined],
    ['empty (Relay says "" for none)', '', undefined],
  ];
  for (const [name, value, expected] of explorers) {
    test(`explorer address: ${name}`, { timeout: 5_000 }, () => assert.equal(safeExplorerUrl(value), expected));
  }

  const links: [string, string | undefined, string | null, string | null][] = [
    ['a hash on a chain with an explorer', 'https://basescan.org', HASH, `https://basescan.org/tx/${HASH}`],
    ['no hash yet', 'https://basescan.org', null, null],
    ['a chain without an explorer (the local chains)', undefined, HASH, null],
    ['not a transaction hash', 'https://basescan.org', '0xabc', null],
    ['a hash carrying a path', 'https://basescan.org', `${HASH}/../../x`, null],
  ];
  for (const [name, explorer, hash, expected] of links) {
    test(`explorer link: ${name}`, { timeout: 5_000 }, () => assert.equal(explorerTxUrl(explorer, hash), expected));
  }
});
