import { parseAbi } from 'viem';

/**
 * The parts of the Privacy Pools (0xbow) ABI this adapter uses, in viem's human-readable form. Each
 * signature is the protocol's own: test/e2e/privacy-pools.test.ts checks them against the ABIs bundled
 * with @0xbow/privacy-pools-core-sdk (which the package does not export).
 */
export const entrypointAbi = parseAbi([
  'struct Withdrawal { address processooor; bytes data; }',
  'struct WithdrawProof { uint256[2] pA; uint256[2][2] pB; uint256[2] pC; uint256[8] pubSignals; }',
  'function deposit(address _asset, uint256 _value, uint256 _precommitment) returns (uint256 _commitment)',
  'function relay(Withdrawal _withdrawal, WithdrawProof _proof, uint256 _scope)',
  'function latestRoot() view returns (uint256 _root)',
  'function assetConfig(address _asset) view returns (address pool, uint256 minimumDepositAmount, uint256 vettingFeeBPS, uint256 maxRelayFeeBPS)',
  'event WithdrawalRelayed(address indexed _relayer, address indexed _recipient, address indexed _asset, uint256 _amount, uint256 _feeAmount)',
  'error NoRootsAvailable()',
]);

export const poolAbi = parseAbi([
  'struct RagequitProof { uint256[2] pA; uint256[2][2] pB; uint256[2] pC; uint256[4] pubSignals; }',
  'function SCOPE() view returns (uint256)',
  'function currentRoot() view returns (uint256 _root)',
  'function nullifierHashes(uint256 _nullifierHash) view returns (bool _spent)',
  'function ragequit(RagequitProof _proof)',
  'event Deposited(address indexed _depositor, uint256 _commitment, uint256 _label, uint256 _value, uint256 _precommitmentHash)',
  'event LeafInserted(uint256 _index, uint256 _leaf, uint256 _root)',
  'event Ragequit(address indexed _ragequitter, uint256 _commitment, uint256 _label, uint256 _value)',
]);

/** `Withdrawal.data` of a relayed withdrawal: who gets the funds, who gets the relay fee, and the fee. */
export const relayDataParameters = [
  {
    type: 'tuple',
    components: [
      { name: 'recipient', type: 'address' },
      { name: 'feeRecipient', type: 'address' },
      { name: 'relayFeeBPS', type: 'uint256' },
    ],
  },
] as const;
