import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type AccountCommitment,
  calculateContext,
  generateDepositSecrets,
  generateMerkleProof,
  generateWithdrawalSecrets,
  getCommitment,
  type Hash,
  type MasterKeys,
  WithdrawalService,
  type WithdrawalProofInput,
} from '@0xbow/privacy-pools-core-sdk';
import { withdrawalSignals } from '../../src/providers/privacy-pools/circuitSignals.ts';

const KEYS = { masterNullifier: 31n, masterSecret: 37n } as unknown as MasterKeys;
const SCOPE = 0x5c0e7n as Hash;

/** The SDK's own signal builder (private in its types; the SDK's prover calls it). */
const sdkSignals = (commitment: Parameters<typeof withdrawalSignals>[0], input: WithdrawalProofInput) =>
  (new WithdrawalService(null as never) as unknown as { prepareInputSignals: typeof withdrawalSignals }).prepareInputSignals(commitment, input);

function case_([index, value, amount, leaves, position]: readonly [bigint, bigint, bigint, number, number]) {
  const label = (7_000n + index) as Hash;
  const deposit = generateDepositSecrets(KEYS, SCOPE, index);
  const commitment = getCommitment(value, label, deposit.nullifier, deposit.secret);
  const stateLeaves = Array.from({ length: leaves }, (_, i) => (i === position ? commitment.hash : BigInt(i + 1) * 13n));
  const aspLeaves = Array.from({ length: leaves }, (_, i) => (i === position ? label : BigInt(i + 1) * 17n));
  const stateMerkleProof = generateMerkleProof(stateLeaves, commitment.hash);
  const aspMerkleProof = generateMerkleProof(aspLeaves, label);
  const change = generateWithdrawalSecrets(KEYS, label, index);
  const input: WithdrawalProofInput = {
    context: BigInt(calculateContext({ processooor: '0x000000000000000000000000000000000000bEEF', data: '0x1234' }, SCOPE)),
    withdrawalAmount: amount,
    stateMerkleProof,
    aspMerkleProof,
    stateRoot: stateMerkleProof.root as Hash,
    stateTreeDepth: BigInt(stateMerkleProof.siblings.length),
    aspRoot: aspMerkleProof.root as Hash,
    aspTreeDepth: 32n,
    newNullifier: change.nullifier,
    newSecret: change.secret,
  };
  // An account's note (the SDK's account service) carries its preimage at the top level, not under `preimage`.
  const account: AccountCommitment = {
    hash: commitment.hash,
    value,
    label,
    nullifier: deposit.nullifier,
    secret: deposit.secret,
    blockNumber: 1n,
    txHash: '0x01',
  };
  return { commitment, account, input };
}

describe("the withdrawal circuit's input signals equal the SDK's", () => {
  const cases = [
    { name: 'one leaf, full amount', args: [0n, 5_000n, 5_000n, 1, 0] as const },
    { name: 'four leaves, partial amount', args: [1n, 1_000_000n, 400_000n, 4, 2] as const },
    { name: 'a hundred leaves, last position', args: [2n, 10n ** 24n, 1n, 100, 99] as const },
    { name: 'zero withdrawal', args: [3n, 77n, 0n, 7, 3] as const },
  ];
  for (const { name, args } of cases) {
    test(`${name}: a deposit's commitment and an account's note`, () => {
      const { commitment, account, input } = case_(args);
      assert.deepEqual(withdrawalSignals(commitment, input), sdkSignals(commitment, input));
      assert.deepEqual(withdrawalSignals(account, input), sdkSignals(account, input));
    });
  }
});
