/** Privacy Pools notes and withdrawal inputs for the prover tests (no chain: the trees are built in memory). */
import {
  calculateContext,
  generateDepositSecrets,
  generateMerkleProof,
  generateWithdrawalSecrets,
  getCommitment,
  type Hash,
  type MasterKeys,
  type WithdrawalProofInput,
} from '@0xbow/privacy-pools-core-sdk';

const KEYS = { masterNullifier: 123n, masterSecret: 456n } as unknown as MasterKeys;
const SCOPE = 0x5c09en as Hash;
// On chain a label is keccak256(scope, nonce) reduced into the field; any non-zero field element proves the same.
export const LABEL = 987_654_321n as Hash;
const RECIPIENT = '0x000000000000000000000000000000000000dEaD';

/**
 * A note of `value` in a four-leaf state tree, its label approved in a three-leaf ASP tree, and the
 * input to withdraw `amount` of it. The circuit accepts amount ≤ value (amount = value leaves a
 * zero-value note); amount > value fails its range check on the remaining value. `index` picks the
 * deposit's secrets (a different note per index).
 */
export function withdrawalOf(value: bigint, amount: bigint, index = 0n) {
  const deposit = generateDepositSecrets(KEYS, SCOPE, index);
  const commitment = getCommitment(value, LABEL, deposit.nullifier, deposit.secret);
  // State tree leaves are commitment hashes; the ASP tree's leaves are labels (approved deposits), not commitments.
  const stateMerkleProof = generateMerkleProof([111n, 222n, commitment.hash, 333n], commitment.hash);
  const aspMerkleProof = generateMerkleProof([444n, LABEL, 555n], LABEL);
  const change = generateWithdrawalSecrets(KEYS, LABEL, index);
  const input: WithdrawalProofInput = {
    context: BigInt(calculateContext({ processooor: RECIPIENT, data: '0x' }, SCOPE)),
    withdrawalAmount: amount,
    stateMerkleProof,
    aspMerkleProof,
    stateRoot: stateMerkleProof.root as Hash,
    // The trees' real depth, as the pool passes it. The circuit only bounds it (≤ 32): 1, 2, 3 and 32
    // all verified with these trees, so the roots are what tie the proof to them.
    stateTreeDepth: 2n,
    aspRoot: aspMerkleProof.root as Hash,
    aspTreeDepth: 2n,
    newNullifier: change.nullifier,
    newSecret: change.secret,
  };
  return { commitment, input };
}
