import type { CommitmentProof, WithdrawalProof } from '@0xbow/privacy-pools-core-sdk';

/** A snarkjs proof in the verifier contract's layout (pB's coordinates swapped, as snarkjs's Solidity verifier expects). */
export function contractProof(proof: WithdrawalProof | CommitmentProof, signals: 4 | 8) {
  const { pi_a, pi_b, pi_c } = proof.proof;
  const big = (values: readonly (string | number | bigint)[]) => values.map((v) => BigInt(v));
  if (proof.publicSignals.length !== signals) throw new Error(`expected ${signals} public signals, got ${proof.publicSignals.length}`);
  return {
    pA: big(pi_a.slice(0, 2)) as [bigint, bigint],
    pB: [big([pi_b[0]![1]!, pi_b[0]![0]!]), big([pi_b[1]![1]!, pi_b[1]![0]!])] as [[bigint, bigint], [bigint, bigint]],
    pC: big(pi_c.slice(0, 2)) as [bigint, bigint],
    pubSignals: big(proof.publicSignals) as never,
  };
}
