import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  getContractAddress,
  http,
  pad,
  type Address,
  type Hex,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { messageTransmitterV2Abi, messageTransmitterV2Bytecode } from './artifacts/MessageTransmitterV2.ts';
import { testTokenAbi } from './artifacts/TestToken.ts';
import { tokenMessengerV2Abi, tokenMessengerV2Bytecode } from './artifacts/TokenMessengerV2.ts';
import { tokenMinterV2Abi, tokenMinterV2Bytecode } from './artifacts/TokenMinterV2.ts';
import type { CctpChain, CctpDeployment, ChainRole, DevnetChain, DevnetManifest } from './manifest.ts';

export type { CctpChain, CctpDeployment } from './manifest.ts';

/** Anvil account 5: the attester whose signatures the devnet MessageTransmitterV2s accept (the Iris emulator's key). */
export const DEVNET_CCTP_ATTESTER_KEY: Hex = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';

/**
 * Anvil account 6: deploys and owns the CCTP contracts. An account used for nothing else gives them the
 * same addresses on every fresh chain, as Circle's CREATE2 deployments have.
 */
export const DEVNET_CCTP_OWNER_KEY: Hex = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e';

/** CCTP domain ids of the devnet chains; real CCTP domains are small integers (0-30 so far). */
export const DEVNET_CCTP_DOMAINS: Readonly<Record<ChainRole, number>> = { source: 100, hub: 101, destination: 102 };

/** CCTP v2's MessageV2 and BurnMessageV2 version. */
export const CCTP_V2_MESSAGE_VERSION = 1;

const MAX_MESSAGE_BODY_SIZE = 8192n;
/** Per-message burn limit of USDC (TokenMinterV2.burnLimitsPerMessage): 1 billion USDC. */
const BURN_LIMIT_PER_MESSAGE = 1_000_000_000n * 10n ** 6n;

// Explicit gas: the transactions are sent back to back, before the contracts they call are mined.
const DEPLOY_GAS = 5_000_000n;
const CALL_GAS = 200_000n;

const CCTP_FILE = 'cctp.json';

export interface DeployCctpOptions {
  /** Receives `feeExecuted` of every mint (the devnet treasury). */
  feeRecipient: Address;
  /** Where `cctp.json` is kept (the chains' stateDir); without it every call deploys. */
  stateDir?: string;
  /** Default DEVNET_CCTP_ATTESTER_KEY. */
  attesterPrivateKey?: Hex;
  /** Default DEVNET_CCTP_OWNER_KEY. */
  ownerPrivateKey?: Hex;
  /** Default DEVNET_CCTP_DOMAINS. */
  domains?: Readonly<Record<ChainRole, number>>;
  log?: (line: string) => void;
}

interface ChainClients {
  chain: DevnetChain;
  domain: number;
  usdc: Address;
  public: PublicClient;
  owner: WalletClient;
  faucet: WalletClient;
}

/**
 * Deploys the devnet CCTP v2 contracts (MessageTransmitterV2, TokenMinterV2, TokenMessengerV2) on every
 * chain of the manifest, links every pair of chains (remote token messengers and USDC token pairs) and
 * makes each chain's TokenMinterV2 the USDC bridge minter. With a stateDir, a saved deployment whose
 * contracts still have code is reused instead.
 */
export async function deployCctp(manifest: DevnetManifest, opts: DeployCctpOptions): Promise<CctpDeployment> {
  const log = opts.log ?? (() => {});
  const domains = opts.domains ?? DEVNET_CCTP_DOMAINS;
  const attester = privateKeyToAccount(opts.attesterPrivateKey ?? DEVNET_CCTP_ATTESTER_KEY).address;
  const owner = privateKeyToAccount(opts.ownerPrivateKey ?? DEVNET_CCTP_OWNER_KEY);
  const faucet = privateKeyToAccount(manifest.faucetPrivateKey);
  const chains = manifest.chains.map((chain) => connect(chain, domains[chain.role], owner, faucet));

  const saved = opts.stateDir ? readSaved(join(opts.stateDir, CCTP_FILE), log) : undefined;
  // A malformed file (e.g. a missing address) just means deploying afresh.
  if (saved && (await isReusable(saved, chains, attester, opts.feeRecipient).catch(() => false))) {
    log(`[cctp] reusing the saved deployment (domains ${saved.chains.map((c) => c.domain).join(', ')})`);
    return saved;
  }

  // Addresses follow from the owner's nonce on each chain, so every chain can be linked to the
  // others before anything is mined.
  const planned = await Promise.all(
    chains.map(async (c): Promise<CctpChain> => {
      const nonce = await c.public.getTransactionCount({ address: owner.address, blockTag: 'pending' });
      const at = (offset: number) => getContractAddress({ from: owner.address, nonce: BigInt(nonce + offset) });
      return {
        chainId: c.chain.chainId,
        domain: c.domain,
        messageTransmitter: at(0),
        tokenMinter: at(1),
        tokenMessenger: at(2),
        usdc: c.usdc,
      };
    }),
  );
  await Promise.all(chains.map((c, i) => deployOnChain(c, planned[i]!, planned, { attester, feeRecipient: opts.feeRecipient, owner, faucet })));

  const deployment: CctpDeployment = { chains: planned, attester, feeRecipient: opts.feeRecipient };
  if (opts.stateDir) writeFileSync(join(opts.stateDir, CCTP_FILE), `${JSON.stringify(deployment, null, 2)}\n`);
  for (const c of planned) {
    log(`[cctp] chain ${c.chainId} domain ${c.domain}: TokenMessengerV2 ${c.tokenMessenger}, MessageTransmitterV2 ${c.messageTransmitter}`);
  }
  return deployment;
}

function connect(chain: DevnetChain, domain: number, owner: PrivateKeyAccount, faucet: PrivateKeyAccount): ChainClients {
  const usdc = chain.tokens.find((t) => t.symbol === 'USDC')?.address;
  if (!usdc) throw new Error(`devnet chain ${chain.chainId} has no USDC to deploy CCTP for`);
  const viemChain = defineChain({
    id: chain.chainId,
    name: chain.displayName,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [chain.rpcUrl] } },
  });
  const transport = http(chain.rpcUrl);
  return {
    chain,
    domain,
    usdc,
    public: createPublicClient({ chain: viemChain, transport, pollingInterval: 20 }),
    owner: createWalletClient({ account: owner, chain: viemChain, transport }),
    faucet: createWalletClient({ account: faucet, chain: viemChain, transport }),
  };
}

async function deployOnChain(
  c: ChainClients,
  self: CctpChain,
  all: CctpChain[],
  p: { attester: Address; feeRecipient: Address; owner: PrivateKeyAccount; faucet: PrivateKeyAccount },
): Promise<void> {
  const remotes = all.filter((r) => r.chainId !== self.chainId);
  let nonce = await c.public.getTransactionCount({ address: p.owner.address, blockTag: 'pending' });
  const base = { account: p.owner, chain: c.owner.chain, gas: CALL_GAS };
  const hashes: Hex[] = [];

  hashes.push(
    await c.owner.deployContract({
      ...base,
      abi: messageTransmitterV2Abi,
      bytecode: messageTransmitterV2Bytecode,
      args: [self.domain, CCTP_V2_MESSAGE_VERSION, [p.attester], 1n, MAX_MESSAGE_BODY_SIZE],
      nonce: nonce++,
      gas: DEPLOY_GAS,
    }),
    await c.owner.deployContract({ ...base, abi: tokenMinterV2Abi, bytecode: tokenMinterV2Bytecode, nonce: nonce++, gas: DEPLOY_GAS }),
    await c.owner.deployContract({
      ...base,
      abi: tokenMessengerV2Abi,
      bytecode: tokenMessengerV2Bytecode,
      args: [self.messageTransmitter, CCTP_V2_MESSAGE_VERSION],
      nonce: nonce++,
      gas: DEPLOY_GAS,
    }),
  );

  const minter = { ...base, address: self.tokenMinter, abi: tokenMinterV2Abi } as const;
  const messenger = { ...base, address: self.tokenMessenger, abi: tokenMessengerV2Abi } as const;
  hashes.push(
    await c.owner.writeContract({ ...minter, functionName: 'addLocalTokenMessenger', args: [self.tokenMessenger], nonce: nonce++ }),
    await c.owner.writeContract({ ...minter, functionName: 'setMaxBurnAmountPerMessage', args: [self.usdc, BURN_LIMIT_PER_MESSAGE], nonce: nonce++ }),
    await c.owner.writeContract({ ...messenger, functionName: 'addLocalMinter', args: [self.tokenMinter], nonce: nonce++ }),
    await c.owner.writeContract({ ...messenger, functionName: 'setFeeRecipient', args: [p.feeRecipient], nonce: nonce++ }),
  );
  for (const remote of remotes) {
    hashes.push(
      await c.owner.writeContract({
        ...messenger,
        functionName: 'addRemoteTokenMessenger',
        args: [remote.domain, pad(remote.tokenMessenger)],
        nonce: nonce++,
      }),
      await c.owner.writeContract({
        ...minter,
        functionName: 'linkTokenPair',
        args: [self.usdc, remote.domain, pad(remote.usdc)],
        nonce: nonce++,
      }),
    );
  }
  const setMinter = await c.faucet.writeContract({
    account: p.faucet,
    chain: c.faucet.chain,
    address: self.usdc,
    abi: testTokenAbi,
    functionName: 'setBridgeMinter',
    args: [self.tokenMinter],
    gas: CALL_GAS,
  });

  const receipts = await Promise.all([...hashes, setMinter].map((hash) => c.public.waitForTransactionReceipt({ hash })));
  if (receipts.at(-1)?.status !== 'success') {
    // A devnet state saved before TestToken had a bridge minter: its USDC cannot be minted by CCTP.
    throw new Error(
      `USDC ${self.usdc} on chain ${self.chainId} rejected setBridgeMinter; its devnet state predates CCTP support (delete the chains' state directory for a fresh devnet)`,
    );
  }
  const failed = receipts.find((r) => r.status !== 'success');
  if (failed) throw new Error(`CCTP setup transaction ${failed.transactionHash} on chain ${self.chainId} reverted`);
}

function readSaved(path: string, log: (line: string) => void): CctpDeployment | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as CctpDeployment;
  } catch (err) {
    log(`[cctp] ignoring unreadable ${path}: ${String(err)}`);
    return undefined;
  }
}

/**
 * True when the saved deployment matches these chains and settings and all its contracts still have code
 * (the anvil state may have been deleted, or not dumped after a SIGKILL).
 */
async function isReusable(saved: CctpDeployment, chains: ChainClients[], attester: Address, feeRecipient: Address): Promise<boolean> {
  if (!Array.isArray(saved.chains) || saved.chains.length !== chains.length) return false;
  if (saved.attester !== attester || saved.feeRecipient !== feeRecipient) return false;
  const checks = chains.map(async (c) => {
    const s = saved.chains.find((x) => x.chainId === c.chain.chainId);
    if (!s || s.domain !== c.domain || s.usdc !== c.usdc) return false;
    const codes = await Promise.all([s.messageTransmitter, s.tokenMinter, s.tokenMessenger].map((address) => c.public.getCode({ address })));
    return codes.every((code) => code !== undefined && code !== '0x');
  });
  return (await Promise.all(checks)).every(Boolean);
}
