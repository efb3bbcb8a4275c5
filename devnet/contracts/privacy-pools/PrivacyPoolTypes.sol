// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

// Shared types of the local stack's Privacy Pools contracts. They follow the ABI of the 0xbow protocol
// (the one bundled with the npm SDK), so the SDK and the production adapter use them unchanged. This is
// our own implementation, not the protocol's source.

uint256 constant SNARK_SCALAR_FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617;

/// A withdrawal's public intent; its hash (with the pool's scope) is the proof's `context`.
struct Withdrawal {
    address processooor;
    bytes data;
}

/// Groth16 proof of the `withdraw` circuit. pubSignals: newCommitmentHash, existingNullifierHash,
/// withdrawnValue, stateRoot, stateTreeDepth, ASPRoot, ASPTreeDepth, context.
struct WithdrawProof {
    uint256[2] pA;
    uint256[2][2] pB;
    uint256[2] pC;
    uint256[8] pubSignals;
}

/// Groth16 proof of the `commitment` circuit. pubSignals: commitmentHash, nullifierHash, value, label.
struct RagequitProof {
    uint256[2] pA;
    uint256[2][2] pB;
    uint256[2] pC;
    uint256[4] pubSignals;
}

/// What `Entrypoint.relay` pays: the recipient gets the withdrawn value less relayFeeBPS, which goes to feeRecipient.
struct RelayData {
    address recipient;
    address feeRecipient;
    uint256 relayFeeBPS;
}

interface IWithdrawalVerifier {
    function verifyProof(uint256[2] calldata pA, uint256[2][2] calldata pB, uint256[2] calldata pC, uint256[8] calldata pubSignals)
        external
        view
        returns (bool);
}

interface ICommitmentVerifier {
    function verifyProof(uint256[2] calldata pA, uint256[2][2] calldata pB, uint256[2] calldata pC, uint256[4] calldata pubSignals)
        external
        view
        returns (bool);
}

interface IERC20Like {
    function balanceOf(address owner) external view returns (uint256);
}

/// ERC-20 calls that accept tokens returning nothing (USDT) as well as those returning a bool.
library TokenCalls {
    error SafeERC20FailedOperation(address token);

    function transfer(address token, address to, uint256 amount) internal {
        call(token, abi.encodeWithSelector(0xa9059cbb, to, amount));
    }

    function transferFrom(address token, address from, address to, uint256 amount) internal {
        call(token, abi.encodeWithSelector(0x23b872dd, from, to, amount));
    }

    function approve(address token, address spender, uint256 amount) internal {
        call(token, abi.encodeWithSelector(0x095ea7b3, spender, amount));
    }

    function call(address token, bytes memory data) private {
        (bool ok, bytes memory ret) = token.call(data);
        if (!ok || token.code.length == 0 || (ret.length != 0 && !abi.decode(ret, (bool)))) {
            revert SafeERC20FailedOperation(token);
        }
    }
}
