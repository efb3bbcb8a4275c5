import { generateMerkleProof } from '@0xbow/privacy-pools-core-sdk';
import { type Address, BaseError, ContractFunctionRevertedError } from 'viem';
import type { NoteReview } from '../../../domain/observations.ts';
import type { PoolNote } from '../../privacyPool.ts';
import { entrypointAbi } from '../abi.ts';
import { type AssetPool, client, type PoolContext, poolOf } from './context.ts';
import { AspOutOfSyncError } from './errors.ts';

/** `PrivacyPool.review`: one note's review. */
export async function review(ctx: PoolContext, note: PoolNote): Promise<NoteReview> {
  const [review] = await reviewMany(ctx, [note]);
  return review ?? 'pending';
}

/** `PrivacyPool.reviewMany`: the notes' reviews in their order, one read of the ASP's approved leaves per pool. */
export async function reviewMany(ctx: PoolContext, notes: Array<Pick<PoolNote, 'asset' | 'label'>>): Promise<NoteReview[]> {
  const reviews = new Map<string, NoteReview>();
  for (const asset of new Set(notes.map((n) => n.asset.toLowerCase()))) {
    const pool = await poolOf(ctx, asset as Address);
    // Every waiting route asks: they share one read of the ASP's leaves for a moment (a withdrawal reads its own).
    const approved = await ctx.reviewedLabels
      .get(pool.address, () => approvedLabels(ctx, pool))
      .catch((error: unknown) => {
        if (error instanceof AspOutOfSyncError) return { labels: [] as bigint[], root: 0n };
        throw error;
      });
    const approvedSet = new Set(approved.labels);
    const labels = notes.filter((n) => n.asset.toLowerCase() === asset).map((n) => BigInt(n.label));
    const waiting = labels.filter((label) => !approvedSet.has(label));
    const statuses = waiting.length > 0 ? await pool.asp.reviewStatuses(waiting) : new Map<bigint, string>();
    for (const label of labels) {
      reviews.set(`${asset}:${label}`, approvedSet.has(label) ? 'approved' : statuses.get(label) === 'declined' ? 'rejected' : 'pending');
    }
  }
  return notes.map((n) => reviews.get(`${n.asset.toLowerCase()}:${BigInt(n.label)}`) ?? 'pending');
}

/** The ASP's approved labels, checked against the root withdrawals must prove against. */
export async function approvedLabels(ctx: PoolContext, pool: AssetPool): Promise<{ labels: bigint[]; root: bigint }> {
  const [{ aspLeaves }, root] = await Promise.all([
    pool.asp.leaves(),
    client(ctx)
      .readContract({ address: ctx.entrypoint, abi: entrypointAbi, functionName: 'latestRoot' })
      .catch((error: unknown) => {
        // Before the ASP's first root the Entrypoint reverts (NoRootsAvailable): nothing is approved yet. A node that
        // fails is thrown, never read as "nothing approved" (which would tell a withdrawal its deposit is not approved).
        const noRoots = (cause: unknown) => cause instanceof ContractFunctionRevertedError && cause.data?.errorName === 'NoRootsAvailable';
        if (error instanceof BaseError && error.walk(noRoots)) return 0n;
        throw error;
      }),
  ]);
  if (aspLeaves.length === 0 || root === 0n) return { labels: [], root };
  const published = generateMerkleProof(aspLeaves, aspLeaves[0]!).root;
  if (published !== root) throw new AspOutOfSyncError(`the ASP's leaves (root ${published}) do not match the Entrypoint's latest root ${root} yet`);
  return { labels: aspLeaves, root };
}
