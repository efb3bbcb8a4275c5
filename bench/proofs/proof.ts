/**
 * Withdrawal proofs of the production circuit through the service's prover, for the benchmarks: the inputs
 * of a distinct note per route, and one proof's time on this machine.
 */
import {
  calculateContext,
  generateDepositSecrets,
  generateMerkleProof,
  generateWithdrawalSecrets,
  getCommitment,
  type Hash,
  type MasterKeys,
} from '@0xbow/privacy-pools-core-sdk';
import { createProver } from '../../src/providers/privacy-pools/prover.ts';

const KEYS = { masterNullifier: 1_234n, masterSecret: 5_678n } as unknown as MasterKeys;
const SCOPE = 0xbe4c4n as Hash;

/** A distinct note per route (its own label and secrets) in a pool of 64 deposits, all approved. */
export function withdrawalInput(route: number) {
  const label = (1_000_003n + BigInt(route)) as Hash;
  const secrets = generateDepositSecrets(KEYS, SCOPE, BigInt(route));
  const commitment = getCommitment(100_000_000n, label, secrets.nullifier, secrets.secret);
  const leaves = Array.from({ length: 64 }, (_, i) => (i === route % 64 ? commitment.hash : BigInt(i + 1) * 7_919n));
  const labels = Array.from({ length: 64 }, (_, i) => (i === route % 64 ? label : BigInt(i + 1) * 104_729n));
  const stateMerkleProof = generateMerkleProof(leaves, commitment.hash);
  const aspMerkleProof = generateMerkleProof(labels, label);
  const change = generateWithdrawalSecrets(KEYS, label, 0n);
  return {
    commitment,
    input: {
      context: BigInt(calculateContext({ processooor: '0x000000000000000000000000000000000000dEaD', data: '0x' }, SCOPE)),
      withdrawalAmount: 60_000_000n,
      stateMerkleProof,
      aspMerkleProof,
      stateRoot: stateMerkleProof.root as Hash,
      stateTreeDepth: 32n,
      aspRoot: aspMerkleProof.root as Hash,
      aspTreeDepth: 32n,
      newNullifier: change.nullifier,
      newSecret: change.secret,
    },
  };
}

/** Seconds of each of `samples` proofs in a row on a fresh prover (one thread), after its artifact check. */
export async function timeProofs(samples: number): Promise<number[]> {
  const prover = createProver({ concurrency: 1 });
  try {
    await prover.ready();
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const { commitment, input } = withdrawalInput(i);
      const started = performance.now();
      await prover.proveWithdrawal(commitment, input);
      times.push((performance.now() - started) / 1000);
    }
    return times;
  } finally {
    await prover.close();
  }
}
