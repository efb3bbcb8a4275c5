import { type Commitment, calculateContext, generateMerkleProof, type Hash, type Secret, type WithdrawalProof } from '@0xbow/privacy-pools-core-sdk';
import { type Address, encodeAbiParameters } from 'viem';
import type { NoteSecrets } from '../../../signer/signer.ts';
import type { PrivacyPool } from '../../privacyPool.ts';
import { entrypointAbi, relayDataParameters } from '../abi.ts';
import { type AssetPool, client, type PoolContext } from './context.ts';
import { AspOutOfSyncError } from './errors.ts';
import { approvedLabels } from './review.ts';

/** The protocol's circuits take Merkle paths of up to 32 levels; the SDK pads every path to that. */
const MAX_TREE_DEPTH = 32n;
/** Proofs made against an ASP root that the ASP replaced before they could be sent are made again, this often. */
const PROOF_ATTEMPTS = 5;

export type WithdrawInput = Parameters<PrivacyPool['withdraw']>[0];

/** The note a withdrawal spends, checked against the signer's keys, and the secrets of its change note. */
export interface SpentNote {
  pool: AssetPool;
  commitment: Commitment;
  label: bigint;
  change: NoteSecrets;
}

/** The withdrawal as the Entrypoint relays it: to `recipient`, paying our relay fee to the relayer. */
const withdrawalTo = (ctx: PoolContext, recipient: Address) => ({
  processooor: ctx.entrypoint,
  data: encodeAbiParameters(relayDataParameters, [{ recipient, feeRecipient: ctx.opts.relayer.address, relayFeeBPS: BigInt(ctx.opts.relayFeeBps) }]),
});

export type RelayedWithdrawal = ReturnType<typeof withdrawalTo>;

/**
 * Proves the withdrawal of the note in a proof slot, against the trees as they are once the slot is taken. Its
 * destination is asked for only then, so a bridge order it names is fresh.
 */
export async function proveWithdrawal(
  ctx: PoolContext,
  input: WithdrawInput,
  { pool, commitment, label, change }: SpentNote,
): Promise<{ withdrawal: RelayedWithdrawal; proof: WithdrawalProof }> {
  /** The trees as they are now. */
  const currentTrees = async () => {
    const [{ leaves }, approved] = await Promise.all([pool.stateTree.scan(), approvedLabels(ctx, pool)]);
    if (!approved.labels.includes(label)) throw new Error(`the deposit of route ${input.routeId} is not in the ASP's approved set`);
    return { leaves, approved };
  };
  /** The caller's admission of a withdrawal of `amount` against `trees`, before anything is proved against them. */
  const admit = async (trees: Awaited<ReturnType<typeof currentTrees>>, amount: bigint) => {
    const decimal = (values: bigint[]) => new Set(values.map((v) => v.toString()));
    await input.admit?.({ commitments: decimal(trees.leaves), approvedLabels: decimal(trees.approved.labels), leafCount: trees.leaves.length, amount });
    return trees;
  };

  /** Proves against `trees`; the pool accepts only the latest ASP root, so a proof against one replaced meanwhile is made again. */
  const proveAgainstLatestRoots = async (
    withdrawal: RelayedWithdrawal,
    amount: bigint,
    first: Awaited<ReturnType<typeof currentTrees>>,
  ): Promise<WithdrawalProof> => {
    let trees = first;
    for (let attempt = 1; ; attempt++) {
      const { leaves, approved } = trees;
      const stateMerkleProof = generateMerkleProof(leaves, commitment.hash);
      const proof = await ctx.prover.proveWithdrawal(commitment, {
        context: BigInt(calculateContext(withdrawal, pool.scope as Hash)),
        withdrawalAmount: amount,
        stateMerkleProof,
        aspMerkleProof: generateMerkleProof(approved.labels, label),
        stateRoot: stateMerkleProof.root as Hash,
        stateTreeDepth: MAX_TREE_DEPTH,
        aspRoot: approved.root as Hash,
        aspTreeDepth: MAX_TREE_DEPTH,
        newNullifier: change.nullifier as Secret,
        newSecret: change.secret as Secret,
      });
      const latest = await client(ctx).readContract({ address: ctx.entrypoint, abi: entrypointAbi, functionName: 'latestRoot' });
      if (latest === approved.root) return proof;
      if (attempt >= PROOF_ATTEMPTS) throw new AspOutOfSyncError(`the ASP replaced its root during each of ${attempt} withdrawal proofs; retry later`);
      trees = await admit(await currentTrees(), amount);
    }
  };
  return ctx.proofSlots(async () => {
    // Admitted once before the destination is asked for (a bridge order is opened only for a withdrawal that can go
    // ahead), and again with the amount it takes.
    const trees = await admit(await currentTrees(), 0n);
    const { to, amount } = await input.destination();
    const withdrawal = withdrawalTo(ctx, to);
    return { withdrawal, proof: await proveAgainstLatestRoots(withdrawal, amount, await admit(trees, amount)) };
  });
}
