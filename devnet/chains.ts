import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createPublicClient, createWalletClient, defineChain, getContractAddress, http, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { testTokenAbi, testTokenBytecode } from './artifacts/TestToken.ts';
import { deployCctp } from './cctp.ts';
import { deployPrivacyPools } from './privacyPools.ts';
import type { ChainRole, DevnetChain, DevnetManifest, DevnetToken } from './manifest.ts';
import { freePort } from './ports.ts';
import { noProcessRegistry, type ProcessRegistry } from './processes.ts';

export interface StartDevnetChainsOptions {
  /** Interface anvil binds to and the host used in the manifest's RPC URLs. Default 127.0.0.1. */
  host?: string;
  ports: { source: number; hub: number; destination: number };
  chainIds?: { source: number; hub: number; destination: number };
  /**
   * Where chain state survives restarts: `anvil-<chainId>.json` per chain plus `devnet.json`
   * (the manifest) and, with `cctp`, `cctp.json`. Without it every start is a fresh chain.
   */
  stateDir?: string;
  /** Also deploy the devnet CCTP v2 contracts (`devnet/cctp.ts`) and put them in `manifest.cctp`. */
  cctp?: boolean;
  /** Records the anvil processes so a start after a crash can stop the ones left behind. */
  processes?: ProcessRegistry;
  log?: (line: string) => void;
}

export interface DevnetChains {
  manifest: DevnetManifest;
  /** Stops the anvil processes; with a stateDir they write their state to disk first. */
  stop(): Promise<void>;
}

/**
 * Private keys of accounts 0-4 of anvil's default mnemonic "test test ... junk". Devnet only.
 * `poolRelayer` submits every route's pool withdrawal (Entrypoint.relay) and funds gas after it.
 */
/** The local chains' base fee at genesis, in wei: an L2's. */
export const DEVNET_BASE_FEE_WEI = 10_000_000n;

export const DEVNET_ACCOUNTS: { faucet: Hex; gas: Hex; relaySolver: Hex; poolRelayer: Hex; treasury: Hex } = {
  faucet: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  gas: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  relaySolver: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  poolRelayer: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  treasury: '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
};

/** Chain ids no public network uses. */
export const DEFAULT_DEVNET_CHAIN_IDS = { source: 7_113_001, hub: 7_113_002, destination: 7_113_003 };

const ROLES: readonly ChainRole[] = ['source', 'hub', 'destination'];

const CHAIN_NAMES: Record<ChainRole, { name: string; displayName: string }> = {
  source: { name: 'devnet-source', displayName: 'Devnet Source' },
  hub: { name: 'devnet-hub', displayName: 'Devnet Hub' },
  destination: { name: 'devnet-destination', displayName: 'Devnet Destination' },
};

/** Deployed on every chain, in this order (so addresses are stable). Mint amounts are whole tokens. */
const TOKENS = [
  { symbol: 'USDC', name: 'USD Coin', decimals: 6, faucetMint: 1_000_000_000n, solverMint: 10_000_000n },
  { symbol: 'WETH', name: 'Wrapped Ether', decimals: 18, faucetMint: 1_000_000n, solverMint: 10_000n },
] as const;

// Explicit gas limits let us send every deployment transaction back to back without waiting
// for receipts: gas estimation of a mint would fail while its token is not yet mined.
const DEPLOY_GAS = 3_000_000n;
const MINT_GAS = 100_000n;

const RPC_READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;

const MANIFEST_FILE = 'devnet.json';

export async function startDevnetChains(opts: StartDevnetChainsOptions): Promise<DevnetChains> {
  const host = opts.host ?? '127.0.0.1';
  const chainIds = opts.chainIds ?? DEFAULT_DEVNET_CHAIN_IDS;
  const log = opts.log ?? (() => {});
  const { stateDir } = opts;
  if (stateDir) mkdirSync(stateDir, { recursive: true });
  const saved = stateDir ? readSavedManifest(stateDir, log) : undefined;

  const started = await Promise.allSettled(
    ROLES.map((role) =>
      startAnvil({
        label: CHAIN_NAMES[role].name,
        host,
        port: opts.ports[role],
        chainId: chainIds[role],
        statePath: stateDir ? join(stateDir, `anvil-${chainIds[role]}.json`) : undefined,
        processes: opts.processes ?? noProcessRegistry,
        log,
      }),
    ),
  );
  const nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stopAll = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  const failure = started.find((r) => r.status === 'rejected');
  if (failure) {
    await stopAll();
    throw failure.reason;
  }

  try {
    const [source, hub, destination] = await Promise.all(ROLES.map((role, i) => setUpChain(role, nodes[i]!, chainIds[role], saved, log)));
    const manifest: DevnetManifest = {
      chains: [source!.chain, hub!.chain, destination!.chain],
      privacyPools: await deployPrivacyPools(hub!.chain, { stateDir, log }),
      faucetPrivateKey: DEVNET_ACCOUNTS.faucet,
    };
    if (opts.cctp) {
      manifest.cctp = await deployCctp(manifest, { stateDir, feeRecipient: privateKeyToAccount(DEVNET_ACCOUNTS.treasury).address, log });
    }
    if (stateDir) writeFileSync(join(stateDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    return { manifest, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

function readSavedManifest(stateDir: string, log: (line: string) => void): DevnetManifest | undefined {
  const path = join(stateDir, MANIFEST_FILE);
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as DevnetManifest;
  } catch (err) {
    log(`ignoring unreadable ${path}: ${String(err)}`);
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// anvil processes

export interface AnvilNode {
  label: string;
  rpcUrl: string;
  stop(): Promise<void>;
}

function resolveAnvilBinary(): string {
  const arch = ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[process.arch];
  if (arch) {
    const exe = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
    try {
      return createRequire(import.meta.url).resolve(`@foundry-rs/anvil-${process.platform}-${arch}/bin/${exe}`);
    } catch {
      // Platform package missing: fall through to the package's JS wrapper, which finds the binary itself.
    }
  }
  return fileURLToPath(new URL('../node_modules/.bin/anvil', import.meta.url));
}

/** A bare anvil chain of its own on a free loopback port, tracked by nobody and silent: what a test or a benchmark needs. */
export async function startScratchAnvil(label: string, chainId: number): Promise<AnvilNode> {
  return startAnvil({ label, host: '127.0.0.1', port: await freePort(), chainId, statePath: undefined, processes: noProcessRegistry, log: () => {} });
}

/** One anvil process (an L2's base fee), ready to answer; the benchmarks and tests that need a bare chain start it alone. */
export async function startAnvil(p: {
  label: string;
  host: string;
  port: number;
  chainId: number;
  statePath: string | undefined;
  processes: ProcessRegistry;
  log: (line: string) => void;
}): Promise<AnvilNode> {
  // Checked up front because an old anvil still holding the port would answer our readiness
  // probe with the right chain id while the new one fails to bind.
  await assertPortFree(p.host, p.port);
  // An L2's base fee at genesis (0.01 gwei; anvil's default is an L1's 1 gwei): with the RPC proxies' L2 tip
  // (devnet/emulators/chain-rpc), routes cost the service what they would on an L2 (docs/local-stack.md).
  const args = ['--host', p.host, '--port', String(p.port), '--chain-id', String(p.chainId), '--base-fee', String(DEVNET_BASE_FEE_WEI), '--quiet'];
  // --state loads the file if it exists and dumps the state to it when anvil gets SIGTERM/SIGINT.
  if (p.statePath) args.push('--state', p.statePath);

  // Own process group: a terminal's Ctrl-C reaches the stack, which stops the chains after the worker.
  const child = spawn(resolveAnvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  p.processes.track(p.label, child);
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      output.push(line);
      p.log(`[${p.label}] ${line}`);
    });
  }
  let spawnError: Error | undefined;
  child.on('error', (err) => (spawnError = err));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  // If this process exits without calling stop() (uncaught error, process.exit), do not leave
  // anvil running; SIGTERM still lets it dump its state.
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);

  const rpcUrl = `http://${p.host}:${p.port}`;
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (!hasExited(child)) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    p.processes.forget(child.pid);
  };

  try {
    await waitForRpc(rpcUrl, p.chainId, () => {
      if (spawnError) return `could not start anvil: ${spawnError.message}`;
      if (hasExited(child)) return `anvil exited (code ${child.exitCode}): ${output.slice(-5).join(' | ')}`;
      return undefined;
    });
  } catch (err) {
    await stop();
    throw new Error(`${p.label} on port ${p.port}: ${(err as Error).message}`);
  }
  p.log(`[${p.label}] anvil ready at ${rpcUrl} (chain id ${p.chainId})`);
  return { label: p.label, rpcUrl, stop };
}

async function assertPortFree(host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`${host}:${port} is not available (${err.code ?? err.message}); is an earlier devnet still running?`)),
    );
    server.listen(port, host, () => server.close(() => resolve()));
  });
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Polls eth_chainId until the node answers with the expected id; `failed` reports a dead process. */
async function waitForRpc(rpcUrl: string, chainId: number, failed: () => string | undefined): Promise<void> {
  const deadline = Date.now() + RPC_READY_TIMEOUT_MS;
  for (;;) {
    const failure = failed();
    if (failure) throw new Error(failure);
    const answered = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    })
      .then((res) => res.json() as Promise<{ result?: Hex }>)
      .catch(() => undefined);
    if (answered?.result !== undefined) {
      const actual = Number(answered.result);
      // Something else (e.g. a leftover anvil) may already be listening on the port.
      if (actual !== chainId) throw new Error(`${rpcUrl} answered chain id ${actual}, expected ${chainId}`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`no answer from ${rpcUrl} after ${RPC_READY_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// ---------------------------------------------------------------------------------------------
// deployments

interface ChainSetup {
  chain: DevnetChain;
}

async function setUpChain(
  role: ChainRole,
  node: AnvilNode,
  chainId: number,
  saved: DevnetManifest | undefined,
  log: (line: string) => void,
): Promise<ChainSetup> {
  const viemChain = defineChain({
    id: chainId,
    name: CHAIN_NAMES[role].displayName,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [node.rpcUrl] } },
  });
  const client = createPublicClient({ chain: viemChain, transport: http(node.rpcUrl), pollingInterval: 20 });
  const base = { role, chainId, ...CHAIN_NAMES[role], rpcUrl: node.rpcUrl };

  const reusable = await savedDeployment(client, role, chainId, saved);
  if (reusable) {
    log(`[${node.label}] reusing deployments from the saved state`);
    return { chain: { ...base, tokens: reusable.tokens } };
  }

  const faucet = privateKeyToAccount(DEVNET_ACCOUNTS.faucet);
  const wallet = createWalletClient({ account: faucet, chain: viemChain, transport: http(node.rpcUrl) });
  // Transactions carry explicit nonces, so the contract addresses are known before they are mined.
  let nonce = await client.getTransactionCount({ address: faucet.address, blockTag: 'pending' });
  const hashes: Hex[] = [];

  const tokens: DevnetToken[] = [];
  for (const t of TOKENS) {
    const address = getContractAddress({ from: faucet.address, nonce: BigInt(nonce) });
    hashes.push(
      await wallet.deployContract({
        abi: testTokenAbi,
        bytecode: testTokenBytecode,
        args: [t.name, t.symbol, t.decimals],
        nonce: nonce++,
        gas: DEPLOY_GAS,
      }),
    );
    tokens.push({ symbol: t.symbol, name: t.name, decimals: t.decimals, address });
  }

  const solver = privateKeyToAccount(DEVNET_ACCOUNTS.relaySolver).address;
  for (const [i, t] of TOKENS.entries()) {
    const unit = 10n ** BigInt(t.decimals);
    for (const [to, amount] of [
      [faucet.address, t.faucetMint * unit],
      [solver, t.solverMint * unit],
    ] as const) {
      hashes.push(
        await wallet.writeContract({
          address: tokens[i]!.address,
          abi: testTokenAbi,
          functionName: 'mint',
          args: [to, amount],
          nonce: nonce++,
          gas: MINT_GAS,
        }),
      );
    }
  }

  const receipts = await Promise.all(hashes.map((hash) => client.waitForTransactionReceipt({ hash })));
  const failed = receipts.find((r) => r.status !== 'success');
  if (failed) throw new Error(`[${node.label}] devnet setup transaction ${failed.transactionHash} reverted`);

  log(`[${node.label}] deployed ${tokens.map((t) => `${t.symbol} ${t.address}`).join(', ')}`);
  return { chain: { ...base, tokens } };
}

/**
 * The saved manifest's deployments for this chain, if every contract in it still has code
 * (the anvil state file may have been deleted or not dumped, e.g. after a SIGKILL).
 */
async function savedDeployment(
  client: PublicClient,
  role: ChainRole,
  chainId: number,
  saved: DevnetManifest | undefined,
): Promise<{ tokens: DevnetToken[] } | undefined> {
  const chain = saved?.chains.find((c) => c.role === role && c.chainId === chainId);
  if (!chain) return undefined;
  const addresses: Address[] = chain.tokens.map((t) => t.address);
  const codes = await Promise.all(addresses.map((address) => client.getCode({ address })));
  if (!codes.every((code) => code !== undefined && code !== '0x')) return undefined;
  return { tokens: chain.tokens };
}
