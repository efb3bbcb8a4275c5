import type { AccountCommitment, Commitment, WithdrawalProofInput } from '@0xbow/privacy-pools-core-sdk';

/**
 * The input signals of the Privacy Pools circuits, built the way the SDK builds them for its own prover (its
 * WithdrawalService keeps that method private), so that the native prover proves exactly the statement the SDK
 * would. test/unit/circuit-signals.test.ts holds them equal to the SDK's for the same notes.
 */

export type CircuitSignals = Record<string, bigint | readonly bigint[]>;

/** withdraw.circom: spend `commitment`, withdraw `input.withdrawalAmount`, leave the rest in a new note. */
export function withdrawalSignals(commitment: Commitment | AccountCommitment, input: WithdrawalProofInput): CircuitSignals {
  const note =
    'preimage' in commitment
      ? {
          value: commitment.preimage.value,
          label: commitment.preimage.label,
          nullifier: commitment.preimage.precommitment.nullifier,
          secret: commitment.preimage.precommitment.secret,
        }
      : { value: commitment.value, label: commitment.label, nullifier: commitment.nullifier, secret: commitment.secret };
  return {
    withdrawnValue: input.withdrawalAmount,
    stateRoot: input.stateRoot,
    stateTreeDepth: input.stateTreeDepth,
    ASPRoot: input.aspRoot,
    ASPTreeDepth: input.aspTreeDepth,
    context: input.context,
    label: note.label,
    existingValue: note.value,
    existingNullifier: note.nullifier,
    existingSecret: note.secret,
    newNullifier: input.newNullifier,
    newSecret: input.newSecret,
    stateSiblings: input.stateMerkleProof.siblings,
    stateIndex: BigInt(input.stateMerkleProof.index),
    ASPSiblings: input.aspMerkleProof.siblings,
    ASPIndex: BigInt(input.aspMerkleProof.index),
  };
}

/** commitment.circom (a ragequit): know the preimage of a commitment. */
export function commitmentSignals(value: bigint, label: bigint, nullifier: bigint, secret: bigint): CircuitSignals {
  return { value, label, nullifier, secret };
}
