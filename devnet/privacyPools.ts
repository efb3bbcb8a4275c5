import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, defineChain, getContractAddress, http, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { commitmentVerifierAbi, commitmentVerifierBytecode } from './artifacts/CommitmentVerifier.ts';
import { entrypointAbi, entrypointBytecode } from './artifacts/Entrypoint.ts';
import { poseidonT3Abi, poseidonT3Bytecode } from './artifacts/PoseidonT3.ts';
import { poseidonT4Abi, poseidonT4Bytecode } from './artifacts/PoseidonT4.ts';
import { privacyPoolAbi, privacyPoolBytecode, privacyPoolLinkReferences } from './artifacts/PrivacyPool.ts';
import { withdrawalVerifierAbi, withdrawalVerifierBytecode } from './artifacts/WithdrawalVerifier.ts';
import type { DevnetChain, PrivacyPoolsDeployment } from './manifest.ts';

export type { PrivacyPoolsDeployment } from './manifest.ts';

/**
 * Anvil account 7: deploys the Privacy Pools contracts and owns the Entrypoint. An account used for nothing
 * else gives the contracts the same addresses on every fresh hub chain.
 */
export const DEVNET_POOL_DEPLOYER_KEY: Hex = '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356';

/** Anvil account 8: the ASP emulator's postman (ASP_POSTMAN role), which publishes association-set roots. */
export const DEVNET_ASP_POSTMAN_KEY: Hex = '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97';

/** The pool's fees on mainnet (vetting 50 bps; relayers may charge up to 100 bps), and a 1 USDC minimum deposit. */
export const DEVNET_POOL_CONFIG = { vettingFeeBps: 50, maxRelayFeeBps: 100, minimumDepositAmount: 1_000_000n } as const;

const DEPLOY_GAS = 8_000_000n;
const CALL_GAS = 300_000n;
const STATE_FILE = 'privacy-pools.json';

/**
 * Deploys Privacy Pools on the hub chain: the Poseidon libraries, the two Groth16 verifiers generated from
 * the production zkeys, the Entrypoint (owner: the deployer; ASP_POSTMAN: the ASP emulator) and a USDC pool
 * registered with mainnet's fees. With a stateDir, a saved deployment whose contracts still have code is reused.
 */
export async function deployPrivacyPools(hub: DevnetChain, opts: { stateDir?: string; log?: (line: string) => void } = {}): Promise<PrivacyPoolsDeployment> {
  const log = opts.log ?? (() => {});
  const usdc = hub.tokens.find((t) => t.symbol === 'USDC')?.address;
  if (!usdc) throw new Error(`devnet hub chain ${hub.chainId} has no USDC for a privacy pool`);
  const chain = defineChain({
    id: hub.chainId,
    name: hub.displayName,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [hub.rpcUrl] } },
  });
  const client = createPublicClient({ chain, transport: http(hub.rpcUrl), pollingInterval: 20 }) as PublicClient;
  const deployer = privateKeyToAccount(DEVNET_POOL_DEPLOYER_KEY);
  const wallet = createWalletClient({ account: deployer, chain, transport: http(hub.rpcUrl) });

  const saved = opts.stateDir ? readSaved(join(opts.stateDir, STATE_FILE)) : undefined;
  if (saved && saved.chainId === hub.chainId && (await hasCode(client, [saved.entrypoint, saved.pool]))) {
    log(`[privacy-pools] reusing the saved deployment: Entrypoint ${saved.entrypoint}, pool ${saved.pool}`);
    return saved;
  }

  // Addresses follow from the deployer's nonce, so every transaction can be sent before the previous one is mined.
  let nonce = await client.getTransactionCount({ address: deployer.address, blockTag: 'pending' });
  const next = () => ({ nonce, address: getContractAddress({ from: deployer.address, nonce: BigInt(nonce++) }) });
  const deployBlock = Number(await client.getBlockNumber());
  const hashes: Hex[] = [];
  const deploy = async (spec: { abi: readonly unknown[]; bytecode: Hex; args?: readonly unknown[] }) => {
    const { nonce: n, address } = next();
    hashes.push(await wallet.deployContract({ ...(spec as { abi: []; bytecode: Hex }), args: spec.args as [], nonce: n, gas: DEPLOY_GAS }));
    return address;
  };

  const poseidonT3 = await deploy({ abi: poseidonT3Abi, bytecode: poseidonT3Bytecode });
  const poseidonT4 = await deploy({ abi: poseidonT4Abi, bytecode: poseidonT4Bytecode });
  const withdrawalVerifier = await deploy({ abi: withdrawalVerifierAbi, bytecode: withdrawalVerifierBytecode });
  const commitmentVerifier = await deploy({ abi: commitmentVerifierAbi, bytecode: commitmentVerifierBytecode });
  const postman = privateKeyToAccount(DEVNET_ASP_POSTMAN_KEY).address;
  const entrypoint = await deploy({ abi: entrypointAbi, bytecode: entrypointBytecode, args: [deployer.address, postman] });
  const pool = await deploy({
    abi: privacyPoolAbi,
    bytecode: linkLibraries(privacyPoolBytecode, privacyPoolLinkReferences, { PoseidonT3: poseidonT3, PoseidonT4: poseidonT4 }),
    args: [entrypoint, withdrawalVerifier, commitmentVerifier, usdc],
  });
  const config = DEVNET_POOL_CONFIG;
  hashes.push(
    await wallet.writeContract({
      address: entrypoint,
      abi: entrypointAbi,
      functionName: 'registerPool',
      args: [usdc, pool, config.minimumDepositAmount, BigInt(config.vettingFeeBps), BigInt(config.maxRelayFeeBps)],
      nonce: next().nonce,
      gas: CALL_GAS,
    }),
  );
  const receipts = await Promise.all(hashes.map((hash) => client.waitForTransactionReceipt({ hash })));
  const failed = receipts.find((r) => r.status !== 'success');
  if (failed) throw new Error(`[privacy-pools] deployment transaction ${failed.transactionHash} reverted`);

  const scope = await client.readContract({ address: pool, abi: privacyPoolAbi, functionName: 'SCOPE' });
  const deployment: PrivacyPoolsDeployment = {
    chainId: hub.chainId,
    entrypoint,
    pool,
    asset: usdc,
    scope: scope.toString(),
    deployBlock,
    postman,
    vettingFeeBps: config.vettingFeeBps,
    maxRelayFeeBps: config.maxRelayFeeBps,
  };
  if (opts.stateDir) writeFileSync(join(opts.stateDir, STATE_FILE), `${JSON.stringify(deployment, null, 2)}\n`);
  log(`[privacy-pools] deployed Entrypoint ${entrypoint} and the USDC pool ${pool} (scope ${deployment.scope})`);
  return deployment;
}

/** Replaces solc's library placeholders with the deployed libraries' addresses. */
export function linkLibraries(bytecode: Hex, placeholders: Readonly<Record<string, string>>, addresses: Record<string, Address>): Hex {
  let linked: string = bytecode;
  for (const [name, placeholder] of Object.entries(placeholders)) {
    const address = addresses[name];
    if (!address) throw new Error(`no address for library ${name}`);
    linked = linked.replaceAll(placeholder, address.slice(2).toLowerCase());
  }
  if (linked.includes('__$')) throw new Error('bytecode still has unlinked libraries');
  return linked as Hex;
}

function readSaved(path: string): PrivacyPoolsDeployment | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as PrivacyPoolsDeployment;
  } catch {
    return undefined;
  }
}

async function hasCode(client: PublicClient, addresses: Address[]): Promise<boolean> {
  const codes = await Promise.all(addresses.map((address) => client.getCode({ address }).catch(() => undefined)));
  return codes.every((code) => code !== undefined && code !== '0x');
}
