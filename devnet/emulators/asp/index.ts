import { isAddressEqual, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { PrivacyPoolsDeployment } from '../../manifest.ts';
import { createFaultRegistry, type FaultController, type FaultRegistry } from '../faults.ts';
import { serveWithLoop } from '../http.ts';
import { type AspChain, connectAspChain } from './onchain.ts';
import { createReviewer } from './reviewer.ts';
import { createAspApp } from './aspApi.ts';
import { type AspStore, openAspStore } from './store.ts';

export interface AspEmulatorOptions {
  /** The hub chain, where the pool is. */
  chainId: number;
  rpcUrl: string;
  deployment: PrivacyPoolsDeployment;
  /** Posts the roots; must be the deployment's postman (DEVNET_ASP_POSTMAN_KEY). */
  postmanPrivateKey: Hex;
  /** How long a deposit stays pending after the emulator first sees it. */
  approvalDelayMs: number;
  /** Reviews happen in rounds at least this far apart (default 2000 ms), each posting at most one root. */
  reviewIntervalMs?: number;
  /** 0 = a free port chosen by the OS. */
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** JSON file keeping deposits, reviews and roots across restarts. */
  statePath?: string;
  /** Fault registry shared with the stack's other emulators ('asp-review'); default: its own. */
  faults?: FaultRegistry;
  /** How often the pool's events are read. Default 200 ms. */
  pollIntervalMs?: number;
  log?: (obj: object) => void;
}

export interface AspEmulator {
  url: string;
  port: number;
  faults: FaultController;
  stop(): Promise<void>;
}

/**
 * Starts a local stand-in for the 0xbow ASP (api.0xbow.io) for the devnet pool: it follows the pool's
 * deposits, approves each after approvalDelayMs (or declines it, on an 'asp-review' fault), posts the
 * root of the approved labels with Entrypoint.updateRoot, and serves the public API's mt-roots, mt-leaves
 * and deposits-by-label for the pool.
 */
export async function startAspEmulator(opts: AspEmulatorOptions): Promise<AspEmulator> {
  const log = opts.log ?? (() => {});
  const { deployment } = opts;
  validateOptions(opts);
  const scope = BigInt(deployment.scope);

  const chain = connectAspChain(opts);
  const store = openAspStore({
    statePath: opts.statePath,
    pool: { chainId: opts.chainId, entrypoint: deployment.entrypoint, pool: deployment.pool, scope },
    log,
  });
  await forgetOtherChains(store, chain, log);
  const faults = opts.faults ?? createFaultRegistry(log);
  const reviewer = createReviewer({
    store,
    chain,
    faults,
    deployBlock: deployment.deployBlock,
    approvalDelayMs: opts.approvalDelayMs,
    reviewIntervalMs: opts.reviewIntervalMs ?? 2000,
    pollIntervalMs: opts.pollIntervalMs ?? 200,
    log,
  });
  const app = createAspApp({ chainId: opts.chainId, scope, store, faults, startedAt: Date.now(), log });

  const server = await serveWithLoop(app, reviewer, {
    port: opts.port,
    host: opts.host,
    name: 'asp_emulator',
    log,
    started: { chainId: opts.chainId, pool: deployment.pool, scope: deployment.scope },
  });
  return { ...server, faults };
}

function validateOptions(opts: AspEmulatorOptions): void {
  if (opts.chainId !== opts.deployment.chainId) {
    throw new Error(`chain ${opts.chainId} is not the Privacy Pools deployment's chain ${opts.deployment.chainId}`);
  }
  const postman = privateKeyToAccount(opts.postmanPrivateKey).address;
  if (!isAddressEqual(postman, opts.deployment.postman)) {
    throw new Error(`postman key ${postman} is not the deployment's ASP postman ${opts.deployment.postman}`);
  }
  if (!Number.isFinite(opts.approvalDelayMs) || opts.approvalDelayMs < 0) throw new Error(`approvalDelayMs must be ≥ 0, got ${opts.approvalDelayMs}`);
}

/**
 * A fresh devnet deploys the pool at the same address again, so the address alone cannot tell a saved state
 * from a stale one: the state is kept only if the chain still has the last block it scanned.
 */
async function forgetOtherChains(store: AspStore, chain: AspChain, log: (obj: object) => void): Promise<void> {
  const scanned = store.state.scanned;
  if (!scanned || (await chain.blockHash(scanned.block)) === scanned.hash) return;
  log({ event: 'asp.state_ignored', reason: `block ${scanned.block} is not the one scanned before (another chain)` });
  store.reset();
}
