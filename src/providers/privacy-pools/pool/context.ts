import type { Secret } from '@0xbow/privacy-pools-core-sdk';
import { poseidon1 } from 'poseidon-lite';
import { type Address, zeroAddress } from 'viem';
import type { TxSender } from '../../../chain/txSender.ts';
import { createTtlCache, type TtlCache } from '../../ttlCache.ts';
import { entrypointAbi, poolAbi } from '../abi.ts';
import type { AspClient } from '../asp.ts';
import type { Prover } from '../prover.ts';
import { createLeafScanner, type LeafScanner } from './leafScanner.ts';
import type { PrivacyPoolsOptions } from './options.ts';

/** How long the privacy checks of all waiting routes share one read of the ASP's approved leaves. */
const REVIEW_SHARE_MS = 2_000;

/** One asset's pool as registered at the Entrypoint. */
export interface AssetPool {
  address: Address;
  scope: bigint;
  asp: AspClient;
  stateTree: LeafScanner;
}

/**
 * What every action of the pool adapter works with, built once per adapter: its options, each asset's pool (read
 * from the Entrypoint once), the prover's slots and the ASP's approved leaves shared for a moment by all reviews.
 */
export interface PoolContext {
  opts: PrivacyPoolsOptions;
  chainId: number;
  entrypoint: Address;
  sender: TxSender;
  prover: Prover;
  pools: Map<string, () => Promise<AssetPool>>;
  /** Runs `task` when the prover has a slot for it. */
  proofSlots: <T>(task: () => Promise<T>) => Promise<T>;
  reviewedLabels: TtlCache<{ labels: bigint[]; root: bigint }>;
}

export function poolContext(opts: PrivacyPoolsOptions): PoolContext {
  const { chainId, entrypoint, sender, prover } = opts;
  // The trees are read when a proof can start, not when it is queued: a snapshot taken before waiting
  // behind other proofs would be stale (the ASP root replaced) by the time the proof is made. As many at once as
  // the prover proves, known once it has started (an `auto` prover that fell back to snarkjs proves one at a time).
  let limiter: ReturnType<typeof createLimiter> | undefined;
  const proofSlots = async <T>(task: () => Promise<T>): Promise<T> => {
    await prover.ready();
    limiter ??= createLimiter(prover.setup().concurrency);
    return limiter(task);
  };
  return {
    opts,
    chainId,
    entrypoint,
    sender,
    prover,
    pools: new Map(),
    proofSlots,
    reviewedLabels: createTtlCache<{ labels: bigint[]; root: bigint }>({ ttlMs: REVIEW_SHARE_MS }),
  };
}

export const client = (ctx: PoolContext) => ctx.opts.clients.publicClient(ctx.chainId);

/** The asset's pool, read from the Entrypoint once (its fees are read again on every `fees` call). */
export function poolOf(ctx: PoolContext, asset: Address): Promise<AssetPool> {
  let get = ctx.pools.get(asset.toLowerCase());
  if (!get) {
    get = lazy(async () => {
      const config = await assetConfig(ctx, asset);
      const scope = await client(ctx).readContract({ address: config.pool, abi: poolAbi, functionName: 'SCOPE' });
      return { address: config.pool, scope, asp: ctx.opts.asp(scope), stateTree: createLeafScanner(ctx.opts, config.pool, ctx.opts.leafStore) };
    });
    ctx.pools.set(asset.toLowerCase(), get);
  }
  return get();
}

export async function assetConfig(ctx: PoolContext, asset: Address) {
  const { entrypoint, opts } = ctx;
  const [pool, minimumDeposit, vettingFeeBps, maxRelayFeeBps] = await client(ctx).readContract({
    address: entrypoint,
    abi: entrypointAbi,
    functionName: 'assetConfig',
    args: [asset],
  });
  if (pool === zeroAddress) throw new Error(`no Privacy Pool is registered for ${asset} at the Entrypoint ${entrypoint}`);
  if (BigInt(opts.relayFeeBps) > maxRelayFeeBps)
    throw new Error(`PRIVACY_RELAY_FEE_BPS (${opts.relayFeeBps}) exceeds the pool's maximum relay fee of ${maxRelayFeeBps} bps`);
  return { pool, minimumDeposit, vettingFeeBps: Number(vettingFeeBps) };
}

export const depositSecrets = async (ctx: PoolContext, pool: AssetPool, noteIndex: number) => {
  const { nullifier, secret } = await ctx.opts.secrets.depositSecrets(pool.scope, BigInt(noteIndex));
  return { nullifier: nullifier as Secret, secret: secret as Secret };
};

export const nullifierHash = (nullifier: Secret) => poseidon1([nullifier]);

export async function blockTime(ctx: PoolContext, blockNumber: bigint): Promise<number> {
  return Number((await client(ctx).getBlock({ blockNumber })).timestamp);
}

export async function isSpent(ctx: PoolContext, pool: AssetPool, hash: bigint): Promise<boolean> {
  return client(ctx).readContract({ address: pool.address, abi: poolAbi, functionName: 'nullifierHashes', args: [hash] });
}

/** Runs at most `slots` tasks at once; the others wait in order. */
function createLimiter(slots: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (active >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | null = null;
  return () => {
    value ??= load().catch((error: unknown) => {
      value = null;
      throw error;
    });
    return value;
  };
}
