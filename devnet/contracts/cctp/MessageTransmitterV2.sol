// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IMessageHandlerV2} from "./IMessageHandlerV2.sol";
import {
    FINALITY_THRESHOLD_FINALIZED,
    MESSAGE_BODY_INDEX,
    addressToBytes32,
    bytes32ToAddress,
    readBytes32,
    readUint32
} from "./CctpCommon.sol";

/// @title MessageTransmitterV2 (devnet)
/// @notice Circle CCTP v2's MessageTransmitterV2 for the local devnet: the same external functions,
/// events, message format, attestation check and revert reasons the real contract has for sending
/// and receiving, without the proxy, pauser, rescuer and attester-manager roles (the owner does it all).
/// @dev Message format (MessageV2), all fields packed:
///   version uint32 [0], sourceDomain uint32 [4], destinationDomain uint32 [8], nonce bytes32 [12],
///   sender bytes32 [44], recipient bytes32 [76], destinationCaller bytes32 [108],
///   minFinalityThreshold uint32 [140], finalityThresholdExecuted uint32 [144], messageBody bytes [148].
/// The emitted message has nonce 0 and finalityThresholdExecuted 0: the attestation service fills them in.
contract MessageTransmitterV2 {
    event MessageSent(bytes message);
    event MessageReceived(
        address indexed caller,
        uint32 sourceDomain,
        bytes32 indexed nonce,
        bytes32 sender,
        uint32 indexed finalityThresholdExecuted,
        bytes messageBody
    );
    event AttesterEnabled(address indexed attester);
    event AttesterDisabled(address indexed attester);
    event SignatureThresholdUpdated(uint256 oldSignatureThreshold, uint256 newSignatureThreshold);
    event MaxMessageBodySizeUpdated(uint256 newMaxMessageBodySize);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    uint256 private constant SIGNATURE_LENGTH = 65;
    /// @dev secp256k1n / 2: higher s values are malleable duplicates (EIP-2).
    uint256 private constant MAX_S = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    uint32 public immutable localDomain;
    uint32 public immutable version;

    address public owner;
    uint256 public maxMessageBodySize;
    uint256 public signatureThreshold;
    /// @notice 0 if unused, 1 once a message with this nonce was received.
    mapping(bytes32 => uint256) public usedNonces;

    address[] private enabledAttesters;
    mapping(address => bool) private attesterEnabled;

    modifier onlyOwner() {
        require(msg.sender == owner, "Ownable: caller is not the owner");
        _;
    }

    constructor(
        uint32 localDomain_,
        uint32 version_,
        address[] memory attesters_,
        uint256 signatureThreshold_,
        uint256 maxMessageBodySize_
    ) {
        require(signatureThreshold_ > 0, "Signature threshold is zero");
        require(signatureThreshold_ <= attesters_.length, "Signature threshold exceeds attesters");
        require(maxMessageBodySize_ > 0, "MaxMessageBodySize is zero");
        localDomain = localDomain_;
        version = version_;
        owner = msg.sender;
        emit OwnershipTransferred(address(0), msg.sender);
        for (uint256 i; i < attesters_.length; ++i) _enableAttester(attesters_[i]);
        signatureThreshold = signatureThreshold_;
        maxMessageBodySize = maxMessageBodySize_;
    }

    // ---- sending ----

    function sendMessage(
        uint32 destinationDomain,
        bytes32 recipient,
        bytes32 destinationCaller,
        uint32 minFinalityThreshold,
        bytes calldata messageBody
    ) external {
        require(destinationDomain != localDomain, "Domain is local domain");
        require(messageBody.length <= maxMessageBodySize, "Message body exceeds max size");
        require(recipient != bytes32(0), "Recipient must be nonzero");
        emit MessageSent(
            abi.encodePacked(
                version,
                localDomain,
                destinationDomain,
                bytes32(0), // nonce: assigned by the attestation service
                addressToBytes32(msg.sender),
                recipient,
                destinationCaller,
                minFinalityThreshold,
                uint32(0), // finalityThresholdExecuted: set by the attestation service
                messageBody
            )
        );
    }

    // ---- receiving ----

    /// @param attestation Concatenated 65-byte signatures over keccak256(message), exactly
    /// `signatureThreshold` of them, in increasing order of the recovered attester address.
    function receiveMessage(bytes calldata message, bytes calldata attestation) external returns (bool success) {
        _verifyAttestationSignatures(message, attestation);

        require(message.length >= MESSAGE_BODY_INDEX, "Invalid message: too short");
        require(readUint32(message, 8) == localDomain, "Invalid destination domain");
        bytes32 destinationCaller = readBytes32(message, 108);
        if (destinationCaller != bytes32(0)) {
            require(destinationCaller == addressToBytes32(msg.sender), "Invalid caller for message");
        }
        require(readUint32(message, 0) == version, "Invalid message version");
        bytes32 nonce = readBytes32(message, 12);
        require(usedNonces[nonce] == 0, "Nonce already used");
        // Marked before the handler runs, so a re-entrant receive of the same message fails.
        usedNonces[nonce] = 1;

        uint32 sourceDomain = readUint32(message, 4);
        bytes32 sender = readBytes32(message, 44);
        address recipient = bytes32ToAddress(readBytes32(message, 76));
        uint32 finalityThresholdExecuted = readUint32(message, 144);
        bytes calldata messageBody = message[MESSAGE_BODY_INDEX:];

        if (finalityThresholdExecuted < FINALITY_THRESHOLD_FINALIZED) {
            require(
                IMessageHandlerV2(recipient).handleReceiveUnfinalizedMessage(
                    sourceDomain, sender, finalityThresholdExecuted, messageBody
                ),
                "handleReceiveUnfinalizedMessage() failed"
            );
        } else {
            require(
                IMessageHandlerV2(recipient).handleReceiveFinalizedMessage(
                    sourceDomain, sender, finalityThresholdExecuted, messageBody
                ),
                "handleReceiveFinalizedMessage() failed"
            );
        }

        emit MessageReceived(msg.sender, sourceDomain, nonce, sender, finalityThresholdExecuted, messageBody);
        return true;
    }

    // ---- attesters ----

    function isEnabledAttester(address attester) public view returns (bool) {
        return attesterEnabled[attester];
    }

    function getNumEnabledAttesters() external view returns (uint256) {
        return enabledAttesters.length;
    }

    function getEnabledAttester(uint256 index) external view returns (address) {
        return enabledAttesters[index];
    }

    function enableAttester(address attester) external onlyOwner {
        _enableAttester(attester);
    }

    function disableAttester(address attester) external onlyOwner {
        require(attesterEnabled[attester], "Attester already disabled");
        require(enabledAttesters.length > signatureThreshold, "Signature threshold is too low");
        attesterEnabled[attester] = false;
        for (uint256 i; i < enabledAttesters.length; ++i) {
            if (enabledAttesters[i] == attester) {
                enabledAttesters[i] = enabledAttesters[enabledAttesters.length - 1];
                enabledAttesters.pop();
                break;
            }
        }
        emit AttesterDisabled(attester);
    }

    function setSignatureThreshold(uint256 newSignatureThreshold) external onlyOwner {
        require(newSignatureThreshold != 0, "Invalid signature threshold");
        require(newSignatureThreshold <= enabledAttesters.length, "New signature threshold too high");
        require(newSignatureThreshold != signatureThreshold, "Signature threshold already set");
        emit SignatureThresholdUpdated(signatureThreshold, newSignatureThreshold);
        signatureThreshold = newSignatureThreshold;
    }

    function setMaxMessageBodySize(uint256 newMaxMessageBodySize) external onlyOwner {
        maxMessageBodySize = newMaxMessageBodySize;
        emit MaxMessageBodySizeUpdated(newMaxMessageBodySize);
    }

    function transferOwnership(address newOwner) external onlyOwner {
        require(newOwner != address(0), "Ownable: new owner is the zero address");
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    function _enableAttester(address attester) private {
        require(attester != address(0), "New attester must be nonzero");
        require(!attesterEnabled[attester], "Attester already enabled");
        attesterEnabled[attester] = true;
        enabledAttesters.push(attester);
        emit AttesterEnabled(attester);
    }

    function _verifyAttestationSignatures(bytes calldata message, bytes calldata attestation) private view {
        require(attestation.length == SIGNATURE_LENGTH * signatureThreshold, "Invalid attestation length");
        bytes32 digest = keccak256(message);
        address previous = address(0);
        for (uint256 i; i < signatureThreshold; ++i) {
            address attester = _recover(digest, attestation[i * SIGNATURE_LENGTH:(i + 1) * SIGNATURE_LENGTH]);
            // Strictly increasing addresses rule out a duplicated signature.
            require(attester > previous, "Invalid signature order or dupe");
            require(attesterEnabled[attester], "Invalid signature: not attester");
            previous = attester;
        }
    }

    /// @dev Recovers the signer of a raw 32-byte digest (no EIP-191 prefix), as CCTP's attestations are.
    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address) {
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        require(uint256(s) <= MAX_S, "ECDSA: invalid signature 's' value");
        require(v == 27 || v == 28, "ECDSA: invalid signature 'v' value");
        address signer = ecrecover(digest, v, r, s);
        require(signer != address(0), "ECDSA: invalid signature");
        return signer;
    }
}
