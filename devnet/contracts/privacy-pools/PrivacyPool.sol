// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

import {InternalLeanIMT, LeanIMTData} from "@zk-kit/lean-imt.sol/InternalLeanIMT.sol";
import {PoseidonT4} from "poseidon-solidity/PoseidonT4.sol";
import {
    ICommitmentVerifier,
    IWithdrawalVerifier,
    RagequitProof,
    SNARK_SCALAR_FIELD,
    TokenCalls,
    Withdrawal,
    WithdrawProof
} from "./PrivacyPoolTypes.sol";

interface IAspRootSource {
    function latestRoot() external view returns (uint256);
}

/// @title PrivacyPool (local stack)
/// @notice An ERC-20 Privacy Pool with the 0xbow protocol's ABI and rules: deposits (through the
/// Entrypoint) add Poseidon commitments to a LeanIMT; a withdrawal proves in zero knowledge that it spends
/// a commitment of the tree whose label the ASP approved, and leaves a change commitment; the original
/// depositor can always take an unspent note back with `ragequit`.
contract PrivacyPool {
    using InternalLeanIMT for LeanIMTData;

    uint32 public constant ROOT_HISTORY_SIZE = 64;
    uint32 public constant MAX_TREE_DEPTH = 32;

    address public immutable ENTRYPOINT;
    IWithdrawalVerifier public immutable WITHDRAWAL_VERIFIER;
    ICommitmentVerifier public immutable RAGEQUIT_VERIFIER;
    address public immutable ASSET;
    /// @notice keccak256(pool, chain id, asset) reduced into the SNARK field; binds proofs to this pool.
    uint256 public immutable SCOPE;

    uint256 public nonce;
    bool public dead;
    mapping(uint256 index => uint256 root) public roots;
    uint32 public currentRootIndex;
    mapping(uint256 nullifierHash => bool spent) public nullifierHashes;
    mapping(uint256 label => address depositor) public depositors;

    LeanIMTData private tree;

    event Deposited(address indexed _depositor, uint256 _commitment, uint256 _label, uint256 _value, uint256 _precommitmentHash);
    event LeafInserted(uint256 _index, uint256 _leaf, uint256 _root);
    event Withdrawn(address indexed _processooor, uint256 _value, uint256 _spentNullifier, uint256 _newCommitment);
    event Ragequit(address indexed _ragequitter, uint256 _commitment, uint256 _label, uint256 _value);
    event PoolDied();

    error OnlyEntrypoint();
    error PoolIsDead();
    error InvalidDepositValue();
    error NativeAssetNotAccepted();
    error InvalidProcessooor();
    error ContextMismatch();
    error InvalidTreeDepth();
    error UnknownStateRoot();
    error IncorrectASPRoot();
    error InvalidProof();
    error NullifierAlreadySpent();
    error OnlyOriginalDepositor();
    error InvalidCommitment();
    error MaxTreeDepthReached();
    error ZeroAddress();

    modifier onlyEntrypoint() {
        if (msg.sender != ENTRYPOINT) revert OnlyEntrypoint();
        _;
    }

    constructor(address entrypoint, address withdrawalVerifier, address ragequitVerifier, address asset) {
        if (entrypoint == address(0) || withdrawalVerifier == address(0) || ragequitVerifier == address(0) || asset == address(0)) {
            revert ZeroAddress();
        }
        ENTRYPOINT = entrypoint;
        WITHDRAWAL_VERIFIER = IWithdrawalVerifier(withdrawalVerifier);
        RAGEQUIT_VERIFIER = ICommitmentVerifier(ragequitVerifier);
        ASSET = asset;
        SCOPE = uint256(keccak256(abi.encodePacked(address(this), block.chainid, asset))) % SNARK_SCALAR_FIELD;
    }

    /// @notice Adds a commitment of `_value` (net of the Entrypoint's vetting fee) for `_depositor`.
    function deposit(address _depositor, uint256 _value, uint256 _precommitmentHash)
        external
        payable
        onlyEntrypoint
        returns (uint256 commitment)
    {
        if (dead) revert PoolIsDead();
        if (_value >= type(uint128).max) revert InvalidDepositValue();
        if (msg.value != 0) revert NativeAssetNotAccepted();

        uint256 label = uint256(keccak256(abi.encodePacked(SCOPE, ++nonce))) % SNARK_SCALAR_FIELD;
        depositors[label] = _depositor;
        commitment = PoseidonT4.hash([_value, label, _precommitmentHash]);
        _insert(commitment);

        TokenCalls.transferFrom(ASSET, msg.sender, address(this), _value);
        emit Deposited(_depositor, commitment, label, _value, _precommitmentHash);
    }

    /// @notice Spends a note: pays `withdrawnValue` to the processooor and inserts the change commitment.
    function withdraw(Withdrawal memory _withdrawal, WithdrawProof memory _proof) external {
        uint256[8] memory signals = _proof.pubSignals;
        if (msg.sender != _withdrawal.processooor) revert InvalidProcessooor();
        if (signals[7] != uint256(keccak256(abi.encode(_withdrawal, SCOPE))) % SNARK_SCALAR_FIELD) revert ContextMismatch();
        if (signals[4] > MAX_TREE_DEPTH || signals[6] > MAX_TREE_DEPTH) revert InvalidTreeDepth();
        if (!_isKnownRoot(signals[3])) revert UnknownStateRoot();
        if (signals[5] != IAspRootSource(ENTRYPOINT).latestRoot()) revert IncorrectASPRoot();
        if (!WITHDRAWAL_VERIFIER.verifyProof(_proof.pA, _proof.pB, _proof.pC, signals)) revert InvalidProof();

        _spend(signals[1]);
        _insert(signals[0]);
        TokenCalls.transfer(ASSET, _withdrawal.processooor, signals[2]);
        emit Withdrawn(_withdrawal.processooor, signals[2], signals[1], signals[0]);
    }

    /// @notice The original depositor takes an unspent note back, publicly (e.g. one the ASP never approved).
    function ragequit(RagequitProof memory _proof) external {
        uint256[4] memory signals = _proof.pubSignals;
        if (depositors[signals[3]] != msg.sender) revert OnlyOriginalDepositor();
        if (!RAGEQUIT_VERIFIER.verifyProof(_proof.pA, _proof.pB, _proof.pC, signals)) revert InvalidProof();
        if (!tree._has(signals[0])) revert InvalidCommitment();

        _spend(signals[1]);
        TokenCalls.transfer(ASSET, msg.sender, signals[2]);
        emit Ragequit(msg.sender, signals[0], signals[3], signals[2]);
    }

    /// @notice Stops deposits for good; withdrawals and ragequits keep working.
    function windDown() external onlyEntrypoint {
        if (dead) revert PoolIsDead();
        dead = true;
        emit PoolDied();
    }

    function currentRoot() external view returns (uint256) {
        return tree._root();
    }

    function currentTreeDepth() external view returns (uint256) {
        return tree.depth;
    }

    function currentTreeSize() external view returns (uint256) {
        return tree.size;
    }

    function _insert(uint256 leaf) private {
        uint256 root = tree._insert(leaf);
        if (tree.depth > MAX_TREE_DEPTH) revert MaxTreeDepthReached();
        uint32 next = (currentRootIndex + 1) % ROOT_HISTORY_SIZE;
        roots[next] = root;
        currentRootIndex = next;
        emit LeafInserted(tree.size, leaf, root);
    }

    function _spend(uint256 nullifierHash) private {
        if (nullifierHashes[nullifierHash]) revert NullifierAlreadySpent();
        nullifierHashes[nullifierHash] = true;
    }

    /// @dev A root of the last ROOT_HISTORY_SIZE insertions, newest first.
    function _isKnownRoot(uint256 root) private view returns (bool) {
        if (root == 0) return false;
        uint32 index = currentRootIndex;
        for (uint32 i = 0; i < ROOT_HISTORY_SIZE; i++) {
            if (roots[index] == root) return true;
            index = (index + ROOT_HISTORY_SIZE - 1) % ROOT_HISTORY_SIZE;
        }
        return false;
    }
}
