import type { Address, Hex } from 'viem';

/**
 * What the local stack deployed, written to `<dataDir>/devnet.json` so that the CLI
 * (`routectl devnet info|fund`) and the emulators can find chains, tokens and keys.
 * Only devnet keys (anvil's well-known test mnemonic) ever appear here.
 */
export type ChainRole = 'source' | 'hub' | 'destination';

export interface DevnetToken {
  symbol: string;
  name: string;
  decimals: number;
  address: Address;
}

export interface DevnetChain {
  role: ChainRole;
  chainId: number;
  name: string;
  displayName: string;
  rpcUrl: string;
  tokens: DevnetToken[];
}

/** The devnet CCTP v2 contracts on one chain (`devnet/cctp.ts`). */
export interface CctpChain {
  chainId: number;
  /** CCTP domain id; devnet ids are ones no real CCTP chain uses. */
  domain: number;
  tokenMessenger: Address;
  messageTransmitter: Address;
  tokenMinter: Address;
  /** The chain's devnet USDC, burned and minted by the CCTP contracts. */
  usdc: Address;
}

export interface CctpDeployment {
  chains: CctpChain[];
  /** The one enabled attester (signature threshold 1) of every MessageTransmitterV2. */
  attester: Address;
  /** Receives `feeExecuted` of every mint. */
  feeRecipient: Address;
}

/** The Privacy Pools contracts on the hub chain (`devnet/privacyPools.ts`). */
export interface PrivacyPoolsDeployment {
  chainId: number;
  entrypoint: Address;
  /** The pool of the hub's USDC. */
  pool: Address;
  asset: Address;
  /** The pool's SCOPE, decimal. */
  scope: string;
  /** Block before the first deployment transaction: event scans start here. */
  deployBlock: number;
  /** Holds ASP_POSTMAN: the ASP emulator's account. */
  postman: Address;
  vettingFeeBps: number;
  maxRelayFeeBps: number;
}

export interface DevnetManifest {
  chains: DevnetChain[];
  /** Privacy Pools on the hub chain. */
  privacyPools: PrivacyPoolsDeployment;
  /** Funded account used by `routectl devnet fund` (holds every test token on every chain). */
  faucetPrivateKey: Hex;
  /** Only when the chains were started with `cctp: true`. */
  cctp?: CctpDeployment;
}
