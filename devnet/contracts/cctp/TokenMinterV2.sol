// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @dev The mint and burn functions of contracts/TestToken.sol, for its bridge minter.
interface IMintBurnToken {
    function mint(address to, uint256 amount) external;
    function burn(uint256 amount) external;
}

/// @title TokenMinterV2 (devnet)
/// @notice Circle CCTP v2's TokenMinterV2 for the local devnet: maps remote burn tokens to local tokens,
/// burns what TokenMessengerV2 deposits and mints what it releases. The local token must let this contract
/// mint and burn (TestToken.setBridgeMinter). One owner plays the real contract's owner and tokenController.
contract TokenMinterV2 {
    event LocalTokenMessengerAdded(address localTokenMessenger);
    event LocalTokenMessengerRemoved(address localTokenMessenger);
    event TokenPairLinked(address localToken, uint32 remoteDomain, bytes32 remoteToken);
    event TokenPairUnlinked(address localToken, uint32 remoteDomain, bytes32 remoteToken);
    event SetBurnLimitPerMessage(address indexed token, uint256 burnLimitPerMessage);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    address public owner;
    address public localTokenMessenger;
    /// @notice keccak256(abi.encodePacked(remoteDomain, remoteToken)) => local token.
    mapping(bytes32 => address) public remoteTokensToLocalTokens;
    /// @notice 0 = the token cannot be burned.
    mapping(address => uint256) public burnLimitsPerMessage;

    modifier onlyOwner() {
        require(msg.sender == owner, "Ownable: caller is not the owner");
        _;
    }

    modifier onlyLocalTokenMessenger() {
        require(msg.sender == localTokenMessenger && msg.sender != address(0), "Caller not local TokenMessenger");
        _;
    }

    constructor() {
        owner = msg.sender;
        emit OwnershipTransferred(address(0), msg.sender);
    }

    function burn(address burnToken, uint256 burnAmount) external onlyLocalTokenMessenger {
        uint256 limit = burnLimitsPerMessage[burnToken];
        require(limit > 0, "Burn token not supported");
        require(burnAmount <= limit, "Burn amount exceeds per tx limit");
        IMintBurnToken(burnToken).burn(burnAmount);
    }

    function mint(uint32 sourceDomain, bytes32 burnToken, address to, uint256 amount)
        external
        onlyLocalTokenMessenger
        returns (address mintToken)
    {
        mintToken = _localTokenOrRevert(sourceDomain, burnToken);
        IMintBurnToken(mintToken).mint(to, amount);
    }

    function mint(
        uint32 sourceDomain,
        bytes32 burnToken,
        address recipientOne,
        address recipientTwo,
        uint256 amountOne,
        uint256 amountTwo
    ) external onlyLocalTokenMessenger returns (address mintToken) {
        mintToken = _localTokenOrRevert(sourceDomain, burnToken);
        IMintBurnToken(mintToken).mint(recipientOne, amountOne);
        IMintBurnToken(mintToken).mint(recipientTwo, amountTwo);
    }

    function getLocalToken(uint32 remoteDomain, bytes32 remoteToken) public view returns (address) {
        return remoteTokensToLocalTokens[_remoteTokensKey(remoteDomain, remoteToken)];
    }

    function addLocalTokenMessenger(address newLocalTokenMessenger) external onlyOwner {
        require(newLocalTokenMessenger != address(0), "Invalid TokenMessenger address");
        require(localTokenMessenger == address(0), "Local TokenMessenger already set");
        localTokenMessenger = newLocalTokenMessenger;
        emit LocalTokenMessengerAdded(newLocalTokenMessenger);
    }

    function removeLocalTokenMessenger() external onlyOwner {
        address removed = localTokenMessenger;
        require(removed != address(0), "No local TokenMessenger is set");
        delete localTokenMessenger;
        emit LocalTokenMessengerRemoved(removed);
    }

    function linkTokenPair(address localToken, uint32 remoteDomain, bytes32 remoteToken) external onlyOwner {
        bytes32 key = _remoteTokensKey(remoteDomain, remoteToken);
        require(remoteTokensToLocalTokens[key] == address(0), "Unable to link token pair");
        remoteTokensToLocalTokens[key] = localToken;
        emit TokenPairLinked(localToken, remoteDomain, remoteToken);
    }

    function unlinkTokenPair(address localToken, uint32 remoteDomain, bytes32 remoteToken) external onlyOwner {
        bytes32 key = _remoteTokensKey(remoteDomain, remoteToken);
        require(remoteTokensToLocalTokens[key] != address(0), "Unable to unlink token pair");
        delete remoteTokensToLocalTokens[key];
        emit TokenPairUnlinked(localToken, remoteDomain, remoteToken);
    }

    function setMaxBurnAmountPerMessage(address localToken, uint256 burnLimitPerMessage) external onlyOwner {
        burnLimitsPerMessage[localToken] = burnLimitPerMessage;
        emit SetBurnLimitPerMessage(localToken, burnLimitPerMessage);
    }

    function transferOwnership(address newOwner) external onlyOwner {
        require(newOwner != address(0), "Ownable: new owner is the zero address");
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    function _localTokenOrRevert(uint32 remoteDomain, bytes32 remoteToken) private view returns (address localToken) {
        localToken = getLocalToken(remoteDomain, remoteToken);
        require(localToken != address(0), "Mint token not supported");
    }

    function _remoteTokensKey(uint32 remoteDomain, bytes32 remoteToken) private pure returns (bytes32) {
        return keccak256(abi.encodePacked(remoteDomain, remoteToken));
    }
}
