import { getAddress, isAddress, type Address } from 'viem';

/**
 * CCTP v2 chain configuration as data.
 *
 * Sources (Circle developer docs): contract addresses from
 * https://developers.circle.com/cctp/references/contract-addresses, domains from
 * https://developers.circle.com/cctp/concepts/supported-chains-and-domains, USDC from
 * https://developers.circle.com/stablecoins/usdc-contract-addresses. TokenMessengerV2 and
 * MessageTransmitterV2 are CREATE2 deployments with one address per environment on every EVM chain (EDGE, domain
 * 28, is the exception and is not listed). Only chains whose chain id, domain and native USDC address agree in two
 * sources (Circle's pages or its @circle-fin/bridge-kit package, and viem or another codebase) are listed
 * (docs/networks.md); add more by appending entries, nothing else depends on the list.
 */

export interface CctpChainConfig {
  chainId: number;
  name: string;
  displayName: string;
  /** Circle's CCTP domain id (not the EVM chain id). */
  domain: number;
  usdc: Address;
  /** TokenMessengerV2: approve USDC to it, then depositForBurn. */
  tokenMessenger: Address;
  /** MessageTransmitterV2: receiveMessage on the destination, usedNonces. */
  messageTransmitter: Address;
}

export type CctpEnvironment = 'mainnet' | 'testnet';

export const CCTP_V2_CONTRACTS: Record<CctpEnvironment, { tokenMessenger: Address; messageTransmitter: Address }> = {
  mainnet: {
    tokenMessenger: '0x28b5a0e9C621a5BadaA536219b3a228C8168cf5d',
    messageTransmitter: '0x81D40F21F12A8F0E3252Bccb954D722d4c464B64',
  },
  testnet: {
    tokenMessenger: '0x8FE6B999Dc680CcFDD5Bf7EB0974218be2542DAA',
    messageTransmitter: '0xE737e5cEBEEBa77EFE34D4aa090756590b1CE275',
  },
};

/** Iris (attestation service) hosts per environment. */
export const IRIS_BASE_URLS: Record<CctpEnvironment, string> = {
  mainnet: 'https://iris-api.circle.com',
  testnet: 'https://iris-api-sandbox.circle.com',
};

type ChainRow = [chainId: number, name: string, displayName: string, domain: number, usdc: Address];

const MAINNET: ChainRow[] = [
  [1, 'ethereum', 'Ethereum', 0, '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'],
  [43114, 'avalanche', 'Avalanche C-Chain', 1, '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E'],
  [10, 'optimism', 'OP Mainnet', 2, '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85'],
  [42161, 'arbitrum', 'Arbitrum One', 3, '0xaf88d065e77c8cC2239327C5EDb3A432268e5831'],
  [8453, 'base', 'Base', 6, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'],
  [137, 'polygon', 'Polygon PoS', 7, '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359'],
  [130, 'unichain', 'Unichain', 10, '0x078D782b760474a361dDA0AF3839290b0EF57AD6'],
  [59144, 'linea', 'Linea', 11, '0x176211869cA2b568f2A7D4EE941E073a821EE1ff'],
  [480, 'world-chain', 'World Chain', 14, '0x79A02482A880bCE3F13e09Da970dC34db4CD24d1'],
  [81224, 'codex', 'Codex', 12, '0xd996633a415985DBd7D6D12f4A4343E31f5037cf'],
  [146, 'sonic', 'Sonic', 13, '0x29219dd400f2Bf60E5a23d13Be72B486D4038894'],
  [143, 'monad', 'Monad', 15, '0x754704Bc059F8C67012fEd69BC8A327a5aafb603'],
  [1329, 'sei', 'Sei', 16, '0xe15fC38F6D8c56aF07bbCBe3BAf5708A2Bf42392'],
  [50, 'xdc', 'XDC Network', 18, '0xfA2958CB79b0491CC627c1557F441eF849Ca8eb1'],
  [999, 'hyperevm', 'HyperEVM', 19, '0xb88339CB7199b77E23DB6E890353E22632Ba630f'],
  [57073, 'ink', 'Ink', 21, '0x2D270e6886d130D724215A266106e6832161EAEd'],
  [98866, 'plume', 'Plume', 22, '0x222365EF19F7947e5484218551B56bb3965Aa7aF'],
];

const TESTNET: ChainRow[] = [
  [11155111, 'ethereum-sepolia', 'Ethereum Sepolia', 0, '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238'],
  [43113, 'avalanche-fuji', 'Avalanche Fuji', 1, '0x5425890298aed601595a70AB815c96711a31Bc65'],
  [11155420, 'optimism-sepolia', 'OP Sepolia', 2, '0x5fd84259d66Cd46123540766Be93DFE6D43130D7'],
  [421614, 'arbitrum-sepolia', 'Arbitrum Sepolia', 3, '0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d'],
  [84532, 'base-sepolia', 'Base Sepolia', 6, '0x036CbD53842c5426634e7929541eC2318f3dCF7e'],
  [80002, 'polygon-amoy', 'Polygon PoS Amoy', 7, '0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582'],
  [1301, 'unichain-sepolia', 'Unichain Sepolia', 10, '0x31d0220469e10c4E71834a79b1f276d740d3768F'],
  [59141, 'linea-sepolia', 'Linea Sepolia', 11, '0xFEce4462D57bD51A6A552365A011b95f0E16d9B7'],
  [812242, 'codex-testnet', 'Codex Testnet', 12, '0x6d7f141b6819C2c9CC2f818e6ad549E7Ca090F8f'],
  [10143, 'monad-testnet', 'Monad Testnet', 15, '0x534b2f3A21130d7a60830c2Df862319e593943A3'],
  [1328, 'sei-testnet', 'Sei Testnet', 16, '0x4fCF1784B31630811181f670Aea7A7bEF803eaED'],
  [98867, 'plume-testnet', 'Plume Testnet', 22, '0xcB5f30e335672893c7eb944B374c196392C19D18'],
];

/** The real CCTP v2 chains of an environment (a fresh, validated copy). */
export function cctpNetwork(environment: CctpEnvironment): CctpChainConfig[] {
  const contracts = CCTP_V2_CONTRACTS[environment];
  const rows = environment === 'mainnet' ? MAINNET : TESTNET;
  return validateCctpChains(rows.map(([chainId, name, displayName, domain, usdc]) => ({ chainId, name, displayName, domain, usdc, ...contracts })));
}

/**
 * One CCTP deployment of the local stack, as the devnet manifest's `cctp` field carries it. The
 * local contracts have their own addresses per chain, so every entry names all three.
 */
export interface LocalCctpDeployment {
  chainId: number;
  domain: number;
  tokenMessenger: Address;
  messageTransmitter: Address;
  usdc: Address;
}

/**
 * Adds the local stack's CCTP deployments to `base` (usually `[]` on the devnet). Names come from
 * `names` (pass the manifest's `chains`) when present. Throws on a duplicate chain id or domain.
 */
export function withLocalChains(
  base: CctpChainConfig[],
  deployments: LocalCctpDeployment[],
  names: Array<{ chainId: number; name: string; displayName: string }> = [],
): CctpChainConfig[] {
  const local = deployments.map((d) => {
    const named = names.find((n) => n.chainId === d.chainId);
    return {
      chainId: d.chainId,
      name: named?.name ?? `local-${d.chainId}`,
      displayName: named?.displayName ?? `Local ${d.chainId}`,
      domain: d.domain,
      usdc: d.usdc,
      tokenMessenger: d.tokenMessenger,
      messageTransmitter: d.messageTransmitter,
    };
  });
  return validateCctpChains([...base, ...local]);
}

/** Checks ids, domains and addresses; returns copies with checksummed addresses. */
export function validateCctpChains(chains: CctpChainConfig[]): CctpChainConfig[] {
  const chainIds = new Set<number>();
  const domains = new Set<number>();
  return chains.map((c) => {
    if (!Number.isSafeInteger(c.chainId) || c.chainId <= 0) throw new Error(`CCTP chain ${c.name}: invalid chain id ${c.chainId}`);
    if (!Number.isInteger(c.domain) || c.domain < 0 || c.domain > 0xffffffff) {
      throw new Error(`CCTP chain ${c.chainId}: invalid domain ${c.domain}`);
    }
    if (chainIds.has(c.chainId)) throw new Error(`CCTP chain ${c.chainId} is configured twice`);
    if (domains.has(c.domain)) throw new Error(`CCTP domain ${c.domain} is configured twice (chain ${c.chainId})`);
    chainIds.add(c.chainId);
    domains.add(c.domain);
    return {
      ...c,
      usdc: checksummed(c.usdc, c.chainId, 'usdc'),
      tokenMessenger: checksummed(c.tokenMessenger, c.chainId, 'tokenMessenger'),
      messageTransmitter: checksummed(c.messageTransmitter, c.chainId, 'messageTransmitter'),
    };
  });
}

function checksummed(address: string, chainId: number, field: string): Address {
  // strict: a mixed-case address must carry a valid checksum, which catches typos in the tables.
  if (!isAddress(address, { strict: true })) throw new Error(`CCTP chain ${chainId}: ${field} is not a valid address: ${address}`);
  return getAddress(address);
}
