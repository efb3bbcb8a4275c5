// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IMessageHandlerV2} from "./IMessageHandlerV2.sol";
import {
    BURN_MESSAGE_HOOK_DATA_INDEX,
    TOKEN_MESSENGER_MIN_FINALITY_THRESHOLD,
    addressToBytes32,
    bytes32ToAddress,
    readBytes32,
    readUint256,
    readUint32
} from "./CctpCommon.sol";

interface ITokenMinterV2 {
    function burn(address burnToken, uint256 burnAmount) external;
    function mint(uint32 sourceDomain, bytes32 burnToken, address to, uint256 amount) external returns (address);
    function mint(
        uint32 sourceDomain,
        bytes32 burnToken,
        address recipientOne,
        address recipientTwo,
        uint256 amountOne,
        uint256 amountTwo
    ) external returns (address);
}

interface IRelayerV2 {
    function sendMessage(
        uint32 destinationDomain,
        bytes32 recipient,
        bytes32 destinationCaller,
        uint32 minFinalityThreshold,
        bytes calldata messageBody
    ) external;
}

interface ITransferFrom {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// @title TokenMessengerV2 (devnet)
/// @notice Circle CCTP v2's TokenMessengerV2 for the local devnet: depositForBurn(WithHook) burns through
/// the local TokenMinterV2 and sends a BurnMessageV2; the handlers mint `amount - feeExecuted` to the
/// recipient and `feeExecuted` to the fee recipient. Same external functions, events, message body and
/// revert reasons as the real contract, without the proxy, rescuer and denylist roles.
/// @dev BurnMessageV2 body, all fields packed:
///   version uint32 [0], burnToken bytes32 [4], mintRecipient bytes32 [36], amount uint256 [68],
///   messageSender bytes32 [100], maxFee uint256 [132], feeExecuted uint256 [164],
///   expirationBlock uint256 [196], hookData bytes [228].
/// The sent body has feeExecuted and expirationBlock 0: the attestation service fills them in.
contract TokenMessengerV2 is IMessageHandlerV2 {
    event DepositForBurn(
        address indexed burnToken,
        uint256 amount,
        address indexed depositor,
        bytes32 mintRecipient,
        uint32 destinationDomain,
        bytes32 destinationTokenMessenger,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 indexed minFinalityThreshold,
        bytes hookData
    );
    event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken, uint256 feeCollected);
    event RemoteTokenMessengerAdded(uint32 domain, bytes32 tokenMessenger);
    event RemoteTokenMessengerRemoved(uint32 domain, bytes32 tokenMessenger);
    event LocalMinterAdded(address localMinter);
    event LocalMinterRemoved(address localMinter);
    event FeeRecipientSet(address feeRecipient);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    address public immutable localMessageTransmitter;
    uint32 public immutable messageBodyVersion;

    address public owner;
    ITokenMinterV2 public localMinter;
    mapping(uint32 => bytes32) public remoteTokenMessengers;
    address public feeRecipient;

    modifier onlyOwner() {
        require(msg.sender == owner, "Ownable: caller is not the owner");
        _;
    }

    modifier onlyLocalMessageTransmitter() {
        require(msg.sender == localMessageTransmitter, "Invalid message transmitter");
        _;
    }

    /// @dev Only messages from the TokenMessenger registered for their source domain are handled.
    modifier onlyRemoteTokenMessenger(uint32 domain, bytes32 tokenMessenger) {
        require(
            tokenMessenger != bytes32(0) && remoteTokenMessengers[domain] == tokenMessenger,
            "Remote TokenMessenger unsupported"
        );
        _;
    }

    constructor(address messageTransmitter_, uint32 messageBodyVersion_) {
        require(messageTransmitter_ != address(0), "MessageTransmitter not set");
        localMessageTransmitter = messageTransmitter_;
        messageBodyVersion = messageBodyVersion_;
        owner = msg.sender;
        emit OwnershipTransferred(address(0), msg.sender);
    }

    // ---- burning ----

    function depositForBurn(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold
    ) external {
        _depositForBurn(amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold, "");
    }

    function depositForBurnWithHook(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold,
        bytes calldata hookData
    ) external {
        require(hookData.length > 0, "Hook data is empty");
        _depositForBurn(amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold, hookData);
    }

    // ---- minting ----

    function handleReceiveFinalizedMessage(uint32 remoteDomain, bytes32 sender, uint32, bytes calldata messageBody)
        external
        override
        onlyLocalMessageTransmitter
        onlyRemoteTokenMessenger(remoteDomain, sender)
        returns (bool)
    {
        return _handleReceiveMessage(messageBody, remoteDomain);
    }

    function handleReceiveUnfinalizedMessage(
        uint32 remoteDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external override onlyLocalMessageTransmitter onlyRemoteTokenMessenger(remoteDomain, sender) returns (bool) {
        require(finalityThresholdExecuted >= TOKEN_MESSENGER_MIN_FINALITY_THRESHOLD, "Unsupported finality threshold");
        return _handleReceiveMessage(messageBody, remoteDomain);
    }

    // ---- configuration ----

    function addRemoteTokenMessenger(uint32 domain, bytes32 tokenMessenger) external onlyOwner {
        require(tokenMessenger != bytes32(0), "bytes32(0) not allowed");
        require(remoteTokenMessengers[domain] == bytes32(0), "TokenMessenger already set");
        remoteTokenMessengers[domain] = tokenMessenger;
        emit RemoteTokenMessengerAdded(domain, tokenMessenger);
    }

    function removeRemoteTokenMessenger(uint32 domain) external onlyOwner {
        bytes32 removed = remoteTokenMessengers[domain];
        require(removed != bytes32(0), "No TokenMessenger set");
        delete remoteTokenMessengers[domain];
        emit RemoteTokenMessengerRemoved(domain, removed);
    }

    function addLocalMinter(address newLocalMinter) external onlyOwner {
        require(newLocalMinter != address(0), "Zero address not allowed");
        require(address(localMinter) == address(0), "Local minter is already set.");
        localMinter = ITokenMinterV2(newLocalMinter);
        emit LocalMinterAdded(newLocalMinter);
    }

    function removeLocalMinter() external onlyOwner {
        address removed = address(localMinter);
        require(removed != address(0), "No local minter is set.");
        delete localMinter;
        emit LocalMinterRemoved(removed);
    }

    function setFeeRecipient(address feeRecipient_) external onlyOwner {
        require(feeRecipient_ != address(0), "Zero address not allowed");
        feeRecipient = feeRecipient_;
        emit FeeRecipientSet(feeRecipient_);
    }

    function transferOwnership(address newOwner) external onlyOwner {
        require(newOwner != address(0), "Ownable: new owner is the zero address");
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    // ---- internals ----

    function _depositForBurn(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold,
        bytes memory hookData
    ) private {
        require(amount > 0, "Amount must be nonzero");
        require(mintRecipient != bytes32(0), "Mint recipient must be nonzero");
        require(maxFee < amount, "Max fee must be less than amount");
        bytes32 destinationTokenMessenger = remoteTokenMessengers[destinationDomain];
        require(destinationTokenMessenger != bytes32(0), "No TokenMessenger for domain");

        ITokenMinterV2 minter = _localMinter();
        require(ITransferFrom(burnToken).transferFrom(msg.sender, address(minter), amount), "Transfer operation failed");
        minter.burn(burnToken, amount);

        bytes memory burnMessage = abi.encodePacked(
            messageBodyVersion,
            addressToBytes32(burnToken),
            mintRecipient,
            amount,
            addressToBytes32(msg.sender),
            maxFee,
            uint256(0), // feeExecuted: set by the attestation service
            uint256(0), // expirationBlock: set by the attestation service
            hookData
        );
        IRelayerV2(localMessageTransmitter).sendMessage(
            destinationDomain, destinationTokenMessenger, destinationCaller, minFinalityThreshold, burnMessage
        );

        emit DepositForBurn(
            burnToken,
            amount,
            msg.sender,
            mintRecipient,
            destinationDomain,
            destinationTokenMessenger,
            destinationCaller,
            maxFee,
            minFinalityThreshold,
            hookData
        );
    }

    function _handleReceiveMessage(bytes calldata body, uint32 remoteDomain) private returns (bool) {
        require(body.length >= BURN_MESSAGE_HOOK_DATA_INDEX, "Invalid message: too short");
        require(readUint32(body, 0) == messageBodyVersion, "Invalid message body version");

        uint256 expirationBlock = readUint256(body, 196);
        require(expirationBlock == 0 || expirationBlock > block.number, "Message expired and must be re-signed");

        uint256 amount = readUint256(body, 68);
        uint256 fee = readUint256(body, 164);
        require(fee == 0 || fee < amount, "Fee equals or exceeds amount");
        require(fee <= readUint256(body, 132), "Fee exceeds max fee");

        address mintRecipient = bytes32ToAddress(readBytes32(body, 36));
        bytes32 burnToken = readBytes32(body, 4);
        ITokenMinterV2 minter = _localMinter();
        address mintToken = fee > 0
            ? minter.mint(remoteDomain, burnToken, mintRecipient, feeRecipient, amount - fee, fee)
            : minter.mint(remoteDomain, burnToken, mintRecipient, amount);

        emit MintAndWithdraw(mintRecipient, amount - fee, mintToken, fee);
        return true;
    }

    function _localMinter() private view returns (ITokenMinterV2) {
        require(address(localMinter) != address(0), "Local minter is not set");
        return localMinter;
    }
}
