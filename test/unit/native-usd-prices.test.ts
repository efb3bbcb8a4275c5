import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Chain, PublicClient } from 'viem';
import type { ChainClients } from '../../src/chain/clients.ts';
import { loadConfig } from '../../src/config.ts';
import { nativeUsdPrices } from '../../src/quote/nativeUsdPrices.ts';
import { createNetworkCosts } from '../../src/quote/networkCost.ts';

const SEPOLIA = 11155111;
const BASE_SEPOLIA = 84532;

describe('the native currency price of quotes: the provider, else NATIVE_USD_PRICES', () => {
  const unavailable = new Error('relay is unavailable');
  const cases: { name: string; provider: string | null | Error; override?: string; expected: string | null | Error }[] = [
    { name: "the provider's price wins", provider: '2500.5', override: '3000', expected: '2500.5' },
    { name: 'no provider price: the override', provider: null, override: '3000', expected: '3000' },
    { name: 'neither: none (the quote is refused)', provider: null, expected: null },
    { name: 'the provider fails: the override', provider: unavailable, override: '3000', expected: '3000' },
    { name: "the provider fails and no override: the provider's error stands", provider: unavailable, expected: unavailable },
  ];
  for (const { name, provider, override, expected } of cases) {
    test(name, async () => {
      const price = nativeUsdPrices({
        fromProvider: async () => {
          if (provider instanceof Error) throw provider;
          return provider;
        },
        overrides: override ? { [SEPOLIA]: override } : {},
      });
      if (expected instanceof Error) await assert.rejects(price(SEPOLIA), expected);
      else assert.equal(await price(SEPOLIA), expected);
    });
  }

  test("on the testnet profile with no provider price for Sepolia ETH, a route's gas is still priced from NATIVE_USD_PRICES", async () => {
    const config = loadConfig(
      {
        NETWORK: 'testnet',
        DATABASE_URL: 'postgres://localhost/none',
        CHAIN_RPC_URLS: JSON.stringify({ [SEPOLIA]: 'http://127.0.0.1:1', [BASE_SEPOLIA]: 'http://127.0.0.1:2' }),
        PAYLOAD_CODEC: 'off',
        WEBHOOK_SIGNING_SECRET: 'w'.repeat(32),
        SIGNER_URL: 'http://127.0.0.1:3',
        SIGNER_AUTH_TOKEN: 't'.repeat(32),
        NATIVE_USD_PRICES: JSON.stringify({ [SEPOLIA]: '3000', [BASE_SEPOLIA]: '3000' }),
      },
      'worker',
    );
    assert.equal(config.HUB_CHAIN_ID, SEPOLIA);
    // Chains that answer 1 gwei per gas; a price provider that has nothing for a testnet's native currency.
    const client = {
      getBlock: async () => ({ baseFeePerGas: 10n ** 9n }),
      estimateFeesPerGas: async () => ({ maxFeePerGas: 10n ** 9n, maxPriorityFeePerGas: 10n ** 8n }),
    } as unknown as PublicClient;
    const chains = { publicClient: () => client, chain: (id: number) => ({ id }) as Chain } as unknown as ChainClients;
    const costs = (overrides: Record<string, string>) =>
      createNetworkCosts({ mode: 'relay', chains, bufferBps: 0, nativeUsd: nativeUsdPrices({ fromProvider: async () => null, overrides }) });
    const route = { sourceChainId: BASE_SEPOLIA, hubChainId: SEPOLIA, destChainId: BASE_SEPOLIA };
    const usd = await costs(config.NATIVE_USD_PRICES).routeCostUsd(route);
    assert.ok(Number(usd) > 0, `priced at ${usd} USD`);
    await assert.rejects(costs({}).routeCostUsd(route), /no USD price for the native currency of chain/);
  });
});
