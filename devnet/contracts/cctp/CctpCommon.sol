// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// Constants and byte-layout helpers shared by the devnet CCTP v2 contracts. Free functions and
// constants only, so the build emits no artifact for this file.

/// @dev At or above: finalized (standard transfer); handled by handleReceiveFinalizedMessage.
uint32 constant FINALITY_THRESHOLD_FINALIZED = 2000;
/// @dev Fast transfers are attested at this level.
uint32 constant FINALITY_THRESHOLD_CONFIRMED = 1000;
/// @dev Lowest finalityThresholdExecuted TokenMessengerV2 accepts.
uint32 constant TOKEN_MESSENGER_MIN_FINALITY_THRESHOLD = 500;

// MessageV2 header: version 0, sourceDomain 4, destinationDomain 8, nonce 12, sender 44, recipient 76,
// destinationCaller 108, minFinalityThreshold 140, finalityThresholdExecuted 144, messageBody 148.
uint256 constant MESSAGE_BODY_INDEX = 148;

// BurnMessageV2 body: version 0, burnToken 4, mintRecipient 36, amount 68, messageSender 100, maxFee 132,
// feeExecuted 164, expirationBlock 196, hookData 228.
uint256 constant BURN_MESSAGE_HOOK_DATA_INDEX = 228;

function addressToBytes32(address a) pure returns (bytes32) {
    return bytes32(uint256(uint160(a)));
}

/// @dev Reverts unless the upper 12 bytes are zero, like CCTP's AddressUtils.
function bytes32ToAddress(bytes32 b) pure returns (address) {
    require(uint256(b) >> 160 == 0, "Invalid address");
    return address(uint160(uint256(b)));
}

function readUint32(bytes calldata data, uint256 index) pure returns (uint32) {
    return uint32(bytes4(data[index:index + 4]));
}

function readBytes32(bytes calldata data, uint256 index) pure returns (bytes32) {
    return bytes32(data[index:index + 32]);
}

function readUint256(bytes calldata data, uint256 index) pure returns (uint256) {
    return uint256(bytes32(data[index:index + 32]));
}
