import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { getAddress, isAddress, zeroAddress } from 'viem';
import { loadConfig, priceEpochHoldBps } from '../../src/config.ts';
import { NETWORK_PROFILES, profileCctp } from '../../src/networks/profiles.ts';
import { movable } from '../../src/providers/relay/adapter.ts';

/** Circle's domain of each chain id (developers.circle.com, "Supported chains and domains"), typed in a second time. */
const CIRCLE_DOMAINS: Record<number, number> = {
  1: 0,
  43114: 1,
  10: 2,
  42161: 3,
  8453: 6,
  137: 7,
  130: 10,
  59144: 11,
  480: 14,
  81224: 12,
  146: 13,
  143: 15,
  1329: 16,
  50: 18,
  999: 19,
  57073: 21,
  98866: 22,
  11155111: 0,
  43113: 1,
  11155420: 2,
  421614: 3,
  84532: 6,
  80002: 7,
  1301: 10,
  59141: 11,
  812242: 12,
  10143: 15,
  1328: 16,
  98867: 22,
};

/** What a worker needs besides the network: keys, database, Temporal settings. No chain constant. */
const KEYS_ONLY = {
  DATABASE_URL: 'postgres://route:secret@db.internal/private_route',
  SIGNER_URL: 'http://signer.internal:8090',
  SIGNER_AUTH_TOKEN: 's'.repeat(40),
  WEBHOOK_SIGNING_SECRET: 'w'.repeat(32),
  PAYLOAD_CODEC: 'off',
};

describe('network profiles: the public constants (src/networks/profiles.ts)', () => {
  for (const profile of NETWORK_PROFILES) {
    test(`${profile.name}: every address carries a valid checksum, every URL is https`, () => {
      for (const pool of profile.privacyPools) {
        assert.ok(isAddress(pool.entrypoint, { strict: true }), `${pool.chainId} entrypoint ${pool.entrypoint}`);
        assert.equal(pool.entrypoint, getAddress(pool.entrypoint));
        assert.ok(
          Number.isSafeInteger(pool.startBlock) && pool.startBlock > 0,
          'a start block, not 0: scanning from genesis costs tens of thousands of log queries',
        );
      }
      for (const url of [profile.relayApiUrl, profile.aspUrl, profileCctp(profile).irisUrl, ...profile.chains.map((c) => c.explorerUrl)]) {
        assert.match(url, /^https:\/\/[a-z0-9.-]+$/, url);
      }
    });

    test(`${profile.name}: CCTP chains have the domains Circle publishes, one chain per domain, one explorer each`, () => {
      const { chains } = profileCctp(profile);
      for (const chain of chains) {
        assert.equal(chain.domain, CIRCLE_DOMAINS[chain.chainId], `domain of ${chain.chainId}`);
        assert.ok(
          profile.chains.some((c) => c.chainId === chain.chainId),
          `explorer and native currency of ${chain.chainId}`,
        );
      }
      assert.equal(new Set(chains.map((c) => c.domain)).size, chains.length);
    });

    test(`${profile.name}: each pool's chain is a USDC chain of the environment, so the pool's asset is that USDC`, () => {
      const { chains } = profileCctp(profile);
      for (const pool of profile.privacyPools) {
        const chain = chains.find((c) => c.chainId === pool.chainId);
        assert.ok(chain, `Privacy Pools chain ${pool.chainId} is a CCTP chain of ${profile.cctpEnvironment}`);
        assert.ok(isAddress(chain.usdc, { strict: true }));
      }
      if (profile.defaultHubChainId !== null) assert.ok(profile.privacyPools.some((p) => p.chainId === profile.defaultHubChainId));
    });
  }

  test('NETWORK=testnet runs with RPC URLs and keys only: hub, pool, start block, ASP, Relay and CCTP come from the profile', () => {
    const config = loadConfig(
      { ...KEYS_ONLY, NETWORK: 'testnet', CHAIN_RPC_URLS: '{"11155111":"https://sepolia.example","84532":"https://base-sepolia.example"}' },
      'worker',
    );
    assert.equal(config.HUB_CHAIN_ID, 11155111);
    assert.equal(config.PRIVACY_POOLS_ENTRYPOINT, '0x34A2068192b1297f2a7f85D7D8CdE66F8F0921cB');
    assert.equal(config.PRIVACY_POOLS_START_BLOCK, 8_461_450);
    assert.equal(config.PRIVACY_POOLS_ASP_URL, 'https://dw.0xbow.io');
    assert.equal(config.RELAY_API_URL, 'https://api.testnets.relay.link');
    assert.equal(config.CCTP_ENVIRONMENT, 'testnet');
    assert.equal(config.HUB_TOKEN_ADDRESS, '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238', "the hub token pinned by address: Circle's Sepolia USDC");
    // Finality per chain from the profile; a variable given wins.
    assert.equal(config.CHAIN_CONFIRMATIONS['11155111'], 6);
    assert.equal(config.CHAIN_CONFIRMATIONS['84532'], 10);
    const pinned = loadConfig(
      { ...KEYS_ONLY, NETWORK: 'testnet', CHAIN_RPC_URLS: '{"11155111":"https://sepolia.example"}', CHAIN_CONFIRMATIONS: '{"11155111":30}' },
      'worker',
    );
    assert.equal(pinned.CHAIN_CONFIRMATIONS['11155111'], 30);
    assert.equal(pinned.CHAIN_CONFIRMATIONS['84532'], 10, 'the other chains keep the profile value');
  });

  test("docs/networks.md's testnet smoke block is a valid worker configuration in burn-and-mint mode", () => {
    const docs = readFileSync(new URL('../../docs/networks.md', import.meta.url), 'utf8');
    const block = /### A testnet smoke run[\s\S]*?```sh\n([\s\S]*?)```/.exec(docs)?.[1];
    assert.ok(block, 'the smoke block is in docs/networks.md');
    const smoke = Object.fromEntries(
      block
        .trim()
        .split('\n')
        .map((line) => {
          const [name, ...value] = line.split('=');
          return [name!, value.join('=').replace(/^'|'$/g, '').replaceAll('…', 'rpc.example')];
        }),
    );
    const config = loadConfig({ ...KEYS_ONLY, ...smoke }, 'worker');
    assert.equal(config.BRIDGE_PROVIDER, 'cctp');
    assert.equal(config.HUB_CHAIN_ID, 11155111);
    assert.deepEqual(Object.keys(config.CHAIN_RPC_URLS).sort(), ['11155111', '421614', '84532']);
  });

  test('every chain of every profile waits at least one block before a transaction counts', () => {
    for (const profile of NETWORK_PROFILES) {
      for (const chain of profile.chains) assert.ok(Number.isInteger(chain.confirmations) && chain.confirmations >= 1, `${profile.name} ${chain.chainId}`);
    }
  });

  test("native ETH is offered (Relay mode) on exactly the profiles' chains whose native currency is ETH", () => {
    for (const profile of NETWORK_PROFILES) {
      for (const chain of profile.chains) {
        // The profile's currency as Relay lists it: the zero address, the chain's symbol and decimals.
        const offered = movable({
          address: zeroAddress,
          symbol: chain.nativeCurrency.symbol,
          decimals: chain.nativeCurrency.decimals,
          metadata: { isNative: true },
        });
        assert.equal(offered, chain.nativeCurrency.symbol === 'ETH', `${profile.name} ${chain.chainId} (${chain.nativeCurrency.symbol})`);
      }
    }
    const mainnet = NETWORK_PROFILES.find((p) => p.name === 'mainnet')!;
    const ethChains = mainnet.chains.filter((c) => c.nativeCurrency.symbol === 'ETH').map((c) => c.chainId);
    for (const chainId of [1, 10, 42161, 8453]) assert.ok(ethChains.includes(chainId), `mainnet ${chainId} has native ETH`);
    for (const chainId of [43114, 137]) assert.ok(!ethChains.includes(chainId), `mainnet ${chainId} has no native ETH`);
  });

  test('NETWORK=testnet without RPC URLs, or without the hub among them, stops with what to set', () => {
    assert.throws(
      () => loadConfig({ ...KEYS_ONLY, NETWORK: 'testnet' }, 'worker'),
      /CHAIN_RPC_URLS must give an RPC URL for every chain the service serves \(at least the hub, 11155111\)/,
    );
    assert.throws(
      () => loadConfig({ ...KEYS_ONLY, NETWORK: 'testnet', CHAIN_RPC_URLS: '{"84532":"https://base-sepolia.example"}' }, 'worker'),
      /CHAIN_RPC_URLS has no RPC URL for the hub chain 11155111/,
    );
    assert.throws(() => loadConfig({ ...KEYS_ONLY, NETWORK: 'moonnet' }, 'worker'), /NETWORK must be devnet, testnet or mainnet/);
  });

  test('NETWORK=mainnet refuses to start until the deliberate choices are made, naming each with why', () => {
    const rpc = { CHAIN_RPC_URLS: '{"42161":"https://arb.example","8453":"https://base.example"}' };
    assert.throws(
      () => loadConfig({ ...KEYS_ONLY, ...rpc, NETWORK: 'mainnet' }, 'worker'),
      (error: Error) => {
        for (const name of ['HUB_CHAIN_ID', 'FEE_BPS', 'FEE_MIN_USD', 'PRIVACY_MIN_ANONYMITY_SET', 'PRIVACY_MAX_WAIT_SECONDS']) {
          assert.match(error.message, new RegExp(`${name} must be set on mainnet: `));
        }
        return true;
      },
    );
    const chosen = { FEE_BPS: '100', FEE_MIN_USD: '2', PRIVACY_MIN_ANONYMITY_SET: '5', PRIVACY_MAX_WAIT_SECONDS: '21600' };
    const config = loadConfig({ ...KEYS_ONLY, ...rpc, ...chosen, NETWORK: 'mainnet', HUB_CHAIN_ID: '42161' }, 'worker');
    assert.equal(config.PRIVACY_POOLS_ENTRYPOINT, '0x44192215FEd782896BE2CE24E0Bfbf0BF825d15E');
    assert.equal(config.PRIVACY_POOLS_START_BLOCK, 404_391_795);
    assert.equal(config.PRIVACY_POOLS_ASP_URL, 'https://api.0xbow.io');
    // A hub without a Privacy Pools deployment is refused, unless the operator names the pool.
    assert.throws(
      () => loadConfig({ ...KEYS_ONLY, ...rpc, ...chosen, NETWORK: 'mainnet', HUB_CHAIN_ID: '8453' }, 'worker'),
      /HUB_CHAIN_ID 8453 has no Privacy Pools deployment/,
    );
    // A variable set wins over its profile's value.
    const own = loadConfig(
      {
        ...KEYS_ONLY,
        ...rpc,
        ...chosen,
        NETWORK: 'mainnet',
        HUB_CHAIN_ID: '42161',
        PRIVACY_POOLS_START_BLOCK: '404400000',
        RELAY_API_URL: 'https://relay.internal',
      },
      'worker',
    );
    assert.equal(own.PRIVACY_POOLS_START_BLOCK, 404_400_000);
    assert.equal(own.RELAY_API_URL, 'https://relay.internal');
  });
});

describe('price epoch settings', { timeout: 10_000 }, () => {
  test('the hold band: 50 bps by default, half a pinned smaller margin, and always below the margin', () => {
    const testnet = { ...KEYS_ONLY, NETWORK: 'testnet', CHAIN_RPC_URLS: '{"11155111":"https://sepolia.example","84532":"https://base-sepolia.example"}' };
    const hold = (env: Record<string, string>) => priceEpochHoldBps(loadConfig({ ...testnet, ...env }, 'worker'));
    assert.equal(hold({}), 50);
    assert.equal(hold({ PRICE_EPOCH_MARGIN_BPS: '50' }), 25, 'a deployment that pinned the old margin keeps its old band');
    assert.equal(hold({ PRICE_EPOCH_MARGIN_BPS: '150', PRICE_EPOCH_HOLD_BPS: '100' }), 100);
    assert.throws(
      () => hold({ PRICE_EPOCH_MARGIN_BPS: '50', PRICE_EPOCH_HOLD_BPS: '50' }),
      /PRICE_EPOCH_HOLD_BPS \(50\) must be below PRICE_EPOCH_MARGIN_BPS \(50\)/,
    );
  });
});
