/**
 * Network profiles (NETWORK=testnet|mainnet): the public constants of a deployment, so that an operator sets RPC URLs,
 * keys and the choices that are theirs, not a dozen addresses. A variable set in the environment always wins over its
 * profile's value. NETWORK=devnet (or unset) fills nothing: the local stack configures everything itself.
 *
 * Sources of every value are in docs/networks.md, with what could not be verified from here (no test reaches a real
 * network; test/unit/network-profiles.test.ts checks the values against each other and against what the adapters
 * expect: checksums, CCTP domains unique per chain, the pool's chain among the CCTP chains of the environment).
 */
import type { Address } from 'viem';
import { CCTP_V2_CONTRACTS, type CctpEnvironment, cctpNetwork, IRIS_BASE_URLS } from '../providers/cctp/chains.ts';

export type NetworkName = 'devnet' | 'testnet' | 'mainnet';

/** A chain as wallets show it: explorer and native currency (with the chain ids and USDC of the CCTP tables). */
export interface ChainInfo {
  chainId: number;
  explorerUrl: string;
  nativeCurrency: { symbol: string; decimals: number };
  /**
   * Blocks a transaction must be below the head before the service counts it (a deposit funding a route, a pool note
   * recorded): deep enough that a reorg of the chain's usual depth leaves it in place (docs/networks.md, "Finality").
   */
  confirmations: number;
}

/**
 * A Privacy Pools (0xbow) deployment: its Entrypoint, the block its events are scanned from (at or before the
 * deployment: an earlier block only costs a few log queries, a later one would miss the pool's first leaves), and the
 * USDC pool the Entrypoint is published to name for the chain's USDC (the adapter asks the Entrypoint itself, so this
 * is for operators to compare: docs/networks.md).
 */
export interface PrivacyPoolsDeployment {
  chainId: number;
  entrypoint: Address;
  startBlock: number;
  usdcPool: Address;
}

export interface NetworkProfile {
  name: Exclude<NetworkName, 'devnet'>;
  /** Circle's environment: its CCTP v2 chains, contracts and Iris host. */
  cctpEnvironment: CctpEnvironment;
  relayApiUrl: string;
  aspUrl: string;
  privacyPools: PrivacyPoolsDeployment[];
  chains: ChainInfo[];
  /** The hub a profile picks when HUB_CHAIN_ID is not set; none on mainnet, where it must be chosen. */
  defaultHubChainId: number | null;
  /**
   * Variables this profile will not default: a deployment must state them (mainnet: they decide what a route costs and
   * how private it is). Each with why.
   */
  deliberate: Record<string, string>;
}

/** A chain whose native currency has 18 decimals (every one listed), ETH unless named. */
const chain = (chainId: number, explorerUrl: string, confirmations: number, nativeSymbol = 'ETH'): ChainInfo => ({
  chainId,
  explorerUrl,
  nativeCurrency: { symbol: nativeSymbol, decimals: 18 },
  confirmations,
});

const PROFILES: Record<NetworkProfile['name'], NetworkProfile> = {
  testnet: {
    name: 'testnet',
    cctpEnvironment: 'testnet',
    relayApiUrl: 'https://api.testnets.relay.link',
    aspUrl: 'https://dw.0xbow.io',
    privacyPools: [
      {
        chainId: 11155111,
        entrypoint: '0x34A2068192b1297f2a7f85D7D8CdE66F8F0921cB',
        startBlock: 8_461_450,
        usdcPool: '0x0b062Fe33c4f1592D8EA63f9a0177FcA44374C0f',
      },
    ],
    chains: [
      chain(11155111, 'https://sepolia.etherscan.io', 6),
      chain(43113, 'https://testnet.snowtrace.io', 1, 'AVAX'),
      chain(11155420, 'https://sepolia-optimism.etherscan.io', 10),
      chain(421614, 'https://sepolia.arbiscan.io', 20),
      chain(84532, 'https://sepolia.basescan.org', 10),
      chain(80002, 'https://amoy.polygonscan.com', 32, 'POL'),
      chain(1301, 'https://sepolia.uniscan.xyz', 10),
      chain(59141, 'https://sepolia.lineascan.build', 10),
      chain(812242, 'https://explorer.codex-stg.xyz', 10),
      chain(10143, 'https://testnet.monadscan.com', 3, 'MON'),
      chain(1328, 'https://testnet.seiscan.io', 1, 'SEI'),
      chain(98867, 'https://testnet-explorer.plume.org', 10, 'PLUME'),
    ],
    // Privacy Pools' only testnet deployment.
    defaultHubChainId: 11155111,
    deliberate: {},
  },
  mainnet: {
    name: 'mainnet',
    cctpEnvironment: 'mainnet',
    relayApiUrl: 'https://api.relay.link',
    aspUrl: 'https://api.0xbow.io',
    privacyPools: [
      { chainId: 1, entrypoint: '0x6818809EefCe719E480a7526D76bD3e561526b46', startBlock: 22_153_709, usdcPool: '0xb419c2867aB3CBc78921660cB95150d95A94ce86' },
      {
        chainId: 42161,
        entrypoint: '0x44192215FEd782896BE2CE24E0Bfbf0BF825d15E',
        startBlock: 404_391_795,
        usdcPool: '0x3706e38af05bf0158BCdbB46239f8289980b093f',
      },
      {
        chainId: 10,
        entrypoint: '0x44192215FEd782896BE2CE24E0Bfbf0BF825d15E',
        startBlock: 144_288_139,
        usdcPool: '0xe4410f6827FA04cE096975D07A9924ABb65316e3',
      },
    ],
    chains: [
      chain(1, 'https://etherscan.io', 12),
      chain(43114, 'https://snowtrace.io', 1, 'AVAX'),
      chain(10, 'https://optimistic.etherscan.io', 10),
      chain(42161, 'https://arbiscan.io', 20),
      chain(8453, 'https://basescan.org', 10),
      chain(137, 'https://polygonscan.com', 64, 'POL'),
      chain(130, 'https://uniscan.xyz', 10),
      chain(59144, 'https://lineascan.build', 10),
      chain(480, 'https://worldscan.org', 10),
      chain(81224, 'https://explorer.codex.xyz', 10),
      chain(146, 'https://sonicscan.org', 1, 'S'),
      chain(143, 'https://monadscan.com', 3, 'MON'),
      chain(1329, 'https://seiscan.io', 1, 'SEI'),
      chain(50, 'https://xdcscan.com', 3, 'XDC'),
      chain(999, 'https://hyperevmscan.io', 3, 'HYPE'),
      chain(57073, 'https://explorer.inkonchain.com', 10),
      chain(98866, 'https://explorer.plume.org', 10, 'PLUME'),
    ],
    defaultHubChainId: null,
    deliberate: {
      HUB_CHAIN_ID: 'the hub decides what every route pays in gas (Ethereum costs dollars per route where Arbitrum or OP cost cents) and whose pool hides it',
      FEE_BPS: 'the service fee is a business decision, not a default',
      FEE_MIN_USD: 'the fee floor must cover what a small route costs beyond its gas (the quotes add the gas themselves)',
      PRIVACY_MIN_ANONYMITY_SET: 'how many peers a route waits for in the pool: the privacy every report promises',
      PRIVACY_MAX_WAIT_SECONDS: 'how long a route waits for them: the other side of that promise',
    },
  },
};

export function networkProfile(name: NetworkName): NetworkProfile | null {
  return name === 'devnet' ? null : PROFILES[name];
}

export const NETWORK_PROFILES = Object.values(PROFILES);

/** The CCTP chains of a profile's environment, with its contracts and Iris host. */
export function profileCctp(profile: NetworkProfile) {
  return {
    chains: cctpNetwork(profile.cctpEnvironment),
    contracts: CCTP_V2_CONTRACTS[profile.cctpEnvironment],
    irisUrl: IRIS_BASE_URLS[profile.cctpEnvironment],
  };
}

/**
 * The environment with the profile's values filled in where a variable is not set, or the problems that stop a
 * deployment on this network: a deliberate choice not made, a hub without a Privacy Pools deployment, a chain without
 * an RPC URL.
 */
export function applyNetworkProfile(env: Record<string, string | undefined>): { env: Record<string, string | undefined>; problems: string[] } {
  const name = (env.NETWORK ?? 'devnet') as NetworkName;
  if (!['devnet', 'testnet', 'mainnet'].includes(name)) return { env, problems: [`NETWORK must be devnet, testnet or mainnet, not "${name}"`] };
  const profile = networkProfile(name);
  if (!profile) return { env, problems: [] };
  const given = (key: string) => (env[key] ?? '').trim() !== '';
  const problems: string[] = [];
  for (const [key, why] of Object.entries(profile.deliberate)) {
    if (!given(key)) problems.push(`${key} must be set on ${profile.name}: ${why}`);
  }
  const filled: Record<string, string | undefined> = { ...env };
  const fill = (key: string, value: string) => {
    if (!given(key)) filled[key] = value;
  };
  if (profile.defaultHubChainId !== null) fill('HUB_CHAIN_ID', String(profile.defaultHubChainId));
  const hubChainId = Number(filled.HUB_CHAIN_ID);
  const pool = profile.privacyPools.find((p) => p.chainId === hubChainId);
  if (given('HUB_CHAIN_ID') || profile.defaultHubChainId !== null) {
    if (pool) {
      fill('PRIVACY_POOLS_ENTRYPOINT', pool.entrypoint);
      fill('PRIVACY_POOLS_START_BLOCK', String(pool.startBlock));
    } else if (!given('PRIVACY_POOLS_ENTRYPOINT')) {
      problems.push(
        `HUB_CHAIN_ID ${filled.HUB_CHAIN_ID} has no Privacy Pools deployment in the ${profile.name} profile (${profile.privacyPools.map((p) => p.chainId).join(', ')}); pick one of those or set PRIVACY_POOLS_ENTRYPOINT and PRIVACY_POOLS_START_BLOCK`,
      );
    }
  }
  // The hub token pinned by address: a bridge's token list may name two tokens "USDC" on one chain.
  const hubUsdc = cctpNetwork(profile.cctpEnvironment).find((c) => c.chainId === hubChainId)?.usdc;
  if (hubUsdc && (filled.HUB_TOKEN_SYMBOL ?? 'USDC').toUpperCase() === 'USDC') fill('HUB_TOKEN_ADDRESS', hubUsdc);
  fill('PRIVACY_POOLS_ASP_URL', profile.aspUrl);
  fill('RELAY_API_URL', profile.relayApiUrl);
  fill('CCTP_ENVIRONMENT', profile.cctpEnvironment);
  // Merged: a deployment that raises one chain keeps the profile's value for every other.
  const confirmations = Object.fromEntries(profile.chains.map((c) => [String(c.chainId), c.confirmations]));
  try {
    if (given('CHAIN_CONFIRMATIONS')) Object.assign(confirmations, JSON.parse(filled.CHAIN_CONFIRMATIONS ?? '{}'));
  } catch {
    // Not JSON: the configuration's own check names it.
    return { env: filled, problems };
  }
  filled.CHAIN_CONFIRMATIONS = JSON.stringify(confirmations);
  if (!given('CHAIN_RPC_URLS')) {
    const hub = Number.isSafeInteger(hubChainId) && hubChainId > 0 ? ` (at least the hub, ${hubChainId})` : '';
    problems.push(`CHAIN_RPC_URLS must give an RPC URL for every chain the service serves${hub}: {"<chainId>":"https://…"}`);
  } else {
    try {
      const urls = JSON.parse(filled.CHAIN_RPC_URLS ?? '{}') as Record<string, unknown>;
      if (Number.isSafeInteger(hubChainId) && hubChainId > 0 && !(String(hubChainId) in urls)) {
        problems.push(`CHAIN_RPC_URLS has no RPC URL for the hub chain ${hubChainId}`);
      }
    } catch {
      // loadConfig reports JSON that does not parse, with the variable's expected shape.
    }
  }
  return { env: filled, problems };
}
