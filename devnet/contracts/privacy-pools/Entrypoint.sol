// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

import {IERC20Like, RelayData, TokenCalls, Withdrawal, WithdrawProof} from "./PrivacyPoolTypes.sol";

interface IPrivacyPoolLike {
    function ASSET() external view returns (address);
    function SCOPE() external view returns (uint256);
    function ENTRYPOINT() external view returns (address);
    function dead() external view returns (bool);
    function deposit(address depositor, uint256 value, uint256 precommitmentHash) external payable returns (uint256);
    function withdraw(Withdrawal memory withdrawal, WithdrawProof memory proof) external;
    function windDown() external;
}

/// @title Entrypoint (local stack)
/// @notice The Privacy Pools entrypoint with the 0xbow protocol's ABI and rules, deployed without a proxy:
/// deposits pay a vetting fee and enter the asset's pool; `relay` lets any account submit a withdrawal
/// whose relay fee comes out of the withdrawn value; the ASP_POSTMAN role publishes the association-set
/// root every withdrawal must prove against. Roles follow OpenZeppelin AccessControl's interface.
contract Entrypoint {
    struct AssetConfig {
        address pool;
        uint256 minimumDepositAmount;
        uint256 vettingFeeBPS;
        uint256 maxRelayFeeBPS;
    }

    struct AssociationSetData {
        uint256 root;
        string ipfsCID;
        uint256 timestamp;
    }

    bytes32 public constant DEFAULT_ADMIN_ROLE = 0x00;
    bytes32 internal constant OWNER_ROLE = keccak256("OWNER_ROLE");
    bytes32 internal constant ASP_POSTMAN = keccak256("ASP_POSTMAN");
    uint256 private constant BPS = 10_000;

    mapping(address asset => AssetConfig) public assetConfig;
    mapping(uint256 scope => address pool) public scopeToPool;
    AssociationSetData[] public associationSets;
    mapping(uint256 precommitment => bool) public usedPrecommitments;

    mapping(bytes32 role => mapping(address account => bool)) private members;
    uint256 private locked = 1;

    event Deposited(address indexed _depositor, address indexed _pool, uint256 _commitment, uint256 _amount);
    event WithdrawalRelayed(address indexed _relayer, address indexed _recipient, address indexed _asset, uint256 _amount, uint256 _feeAmount);
    event RootUpdated(uint256 _root, string _ipfsCID, uint256 _timestamp);
    event PoolRegistered(address _pool, address _asset, uint256 _scope);
    event PoolRemoved(address _pool, address _asset, uint256 _scope);
    event PoolConfigurationUpdated(address _pool, address _asset, uint256 _newMinimumDepositAmount, uint256 _newVettingFeeBPS, uint256 _newMaxRelayFeeBPS);
    event PoolWindDown(address _pool);
    event FeesWithdrawn(address _asset, address _recipient, uint256 _amount);
    event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender);
    event RoleRevoked(bytes32 indexed role, address indexed account, address indexed sender);

    error AccessControlUnauthorizedAccount(address account, bytes32 neededRole);
    error AccessControlBadConfirmation();
    error ReentrancyGuardReentrantCall();
    error ZeroAddress();
    error PoolNotFound();
    error PrecommitmentAlreadyUsed();
    error MinimumDepositAmount();
    error NativeAssetNotAccepted();
    error InvalidWithdrawalAmount();
    error InvalidProcessooor();
    error RelayFeeGreaterThanMax();
    error InvalidPoolState();
    error EmptyRoot();
    error InvalidIPFSCIDLength();
    error NoRootsAvailable();
    error InvalidIndex();
    error AssetPoolAlreadyRegistered();
    error ScopePoolAlreadyRegistered();
    error PoolIsDead();
    error InvalidEntrypointForPool();
    error AssetMismatch();
    error InvalidFeeBPS();

    modifier onlyRole(bytes32 role) {
        if (!members[role][msg.sender]) revert AccessControlUnauthorizedAccount(msg.sender, role);
        _;
    }

    modifier nonReentrant() {
        if (locked != 1) revert ReentrancyGuardReentrantCall();
        locked = 2;
        _;
        locked = 1;
    }

    constructor(address owner, address postman) {
        if (owner == address(0) || postman == address(0)) revert ZeroAddress();
        _grant(OWNER_ROLE, owner);
        _grant(ASP_POSTMAN, postman);
    }

    // ---------------------------------------------------------------- deposits and withdrawals

    /// @notice Deposits `_value` of an ERC-20; the pool receives it less the vetting fee, which stays here.
    function deposit(address _asset, uint256 _value, uint256 _precommitment) external nonReentrant returns (uint256 _commitment) {
        TokenCalls.transferFrom(_asset, msg.sender, address(this), _value);
        AssetConfig memory config = assetConfig[_asset];
        if (config.pool == address(0)) revert PoolNotFound();
        if (usedPrecommitments[_precommitment]) revert PrecommitmentAlreadyUsed();
        usedPrecommitments[_precommitment] = true;
        if (_value < config.minimumDepositAmount) revert MinimumDepositAmount();

        uint256 amountAfterFees = _value - (_value * config.vettingFeeBPS) / BPS;
        _commitment = IPrivacyPoolLike(config.pool).deposit(msg.sender, amountAfterFees, _precommitment);
        emit Deposited(msg.sender, config.pool, _commitment, amountAfterFees);
    }

    /// @notice Native-asset deposits: the local stack's pools hold ERC-20s only.
    function deposit(uint256) external payable returns (uint256) {
        revert NativeAssetNotAccepted();
    }

    /// @notice Submits a withdrawal whose processooor is this contract, paying `RelayData.recipient` the
    /// withdrawn value less the relay fee, and the fee to `RelayData.feeRecipient`. Any account may call it.
    function relay(Withdrawal calldata _withdrawal, WithdrawProof calldata _proof, uint256 _scope) external nonReentrant {
        uint256 withdrawn = _proof.pubSignals[2];
        if (withdrawn == 0) revert InvalidWithdrawalAmount();
        if (_withdrawal.processooor != address(this)) revert InvalidProcessooor();
        address pool = scopeToPool[_scope];
        if (pool == address(0)) revert PoolNotFound();
        address asset = IPrivacyPoolLike(pool).ASSET();
        uint256 balanceBefore = IERC20Like(asset).balanceOf(address(this));

        IPrivacyPoolLike(pool).withdraw(_withdrawal, _proof);

        RelayData memory data = abi.decode(_withdrawal.data, (RelayData));
        if (data.relayFeeBPS > assetConfig[asset].maxRelayFeeBPS) revert RelayFeeGreaterThanMax();
        uint256 amountAfterFees = withdrawn - (withdrawn * data.relayFeeBPS) / BPS;
        uint256 feeAmount = withdrawn - amountAfterFees;
        if (data.recipient == address(0) || data.feeRecipient == address(0)) revert ZeroAddress();
        TokenCalls.transfer(asset, data.recipient, amountAfterFees);
        TokenCalls.transfer(asset, data.feeRecipient, feeAmount);
        if (balanceBefore > IERC20Like(asset).balanceOf(address(this))) revert InvalidPoolState();

        emit WithdrawalRelayed(msg.sender, data.recipient, asset, withdrawn, feeAmount);
    }

    // ---------------------------------------------------------------- association sets (ASP)

    /// @notice Publishes a new association-set root; withdrawals must prove against the latest one.
    function updateRoot(uint256 _root, string memory _ipfsCID) external onlyRole(ASP_POSTMAN) returns (uint256 _index) {
        if (_root == 0) revert EmptyRoot();
        uint256 length = bytes(_ipfsCID).length;
        if (length < 32 || length > 64) revert InvalidIPFSCIDLength();
        associationSets.push(AssociationSetData(_root, _ipfsCID, block.timestamp));
        _index = associationSets.length - 1;
        emit RootUpdated(_root, _ipfsCID, block.timestamp);
    }

    function latestRoot() external view returns (uint256 _root) {
        uint256 length = associationSets.length;
        if (length == 0) revert NoRootsAvailable();
        return associationSets[length - 1].root;
    }

    function rootByIndex(uint256 _index) external view returns (uint256 _root) {
        if (_index >= associationSets.length) revert InvalidIndex();
        return associationSets[_index].root;
    }

    // ---------------------------------------------------------------- pools (owner)

    function registerPool(address _asset, address _pool, uint256 _minimumDepositAmount, uint256 _vettingFeeBPS, uint256 _maxRelayFeeBPS)
        external
        onlyRole(OWNER_ROLE)
    {
        if (_asset == address(0) || _pool == address(0)) revert ZeroAddress();
        if (assetConfig[_asset].pool != address(0)) revert AssetPoolAlreadyRegistered();
        IPrivacyPoolLike pool = IPrivacyPoolLike(_pool);
        if (pool.dead()) revert PoolIsDead();
        if (pool.ENTRYPOINT() != address(this)) revert InvalidEntrypointForPool();
        uint256 scope = pool.SCOPE();
        if (scopeToPool[scope] != address(0)) revert ScopePoolAlreadyRegistered();
        if (_asset != pool.ASSET()) revert AssetMismatch();

        scopeToPool[scope] = _pool;
        assetConfig[_asset].pool = _pool;
        _configure(_asset, _minimumDepositAmount, _vettingFeeBPS, _maxRelayFeeBPS);
        TokenCalls.approve(_asset, _pool, type(uint256).max);
        emit PoolRegistered(_pool, _asset, scope);
    }

    function updatePoolConfiguration(address _asset, uint256 _minimumDepositAmount, uint256 _vettingFeeBPS, uint256 _maxRelayFeeBPS)
        external
        onlyRole(OWNER_ROLE)
    {
        if (assetConfig[_asset].pool == address(0)) revert PoolNotFound();
        _configure(_asset, _minimumDepositAmount, _vettingFeeBPS, _maxRelayFeeBPS);
    }

    function removePool(address _asset) external onlyRole(OWNER_ROLE) {
        address pool = assetConfig[_asset].pool;
        if (pool == address(0)) revert PoolNotFound();
        uint256 scope = IPrivacyPoolLike(pool).SCOPE();
        TokenCalls.approve(_asset, pool, 0);
        delete scopeToPool[scope];
        delete assetConfig[_asset];
        emit PoolRemoved(pool, _asset, scope);
    }

    function windDownPool(address _pool) external onlyRole(OWNER_ROLE) {
        IPrivacyPoolLike(_pool).windDown();
        emit PoolWindDown(_pool);
    }

    /// @notice Sends the vetting fees collected in `_asset` to `_recipient`.
    function withdrawFees(address _asset, address _recipient) external nonReentrant onlyRole(OWNER_ROLE) {
        if (_recipient == address(0)) revert ZeroAddress();
        uint256 balance = IERC20Like(_asset).balanceOf(address(this));
        TokenCalls.transfer(_asset, _recipient, balance);
        emit FeesWithdrawn(_asset, _recipient, balance);
    }

    // ---------------------------------------------------------------- roles (AccessControl's interface)

    function hasRole(bytes32 role, address account) external view returns (bool) {
        return members[role][account];
    }

    function getRoleAdmin(bytes32) external pure returns (bytes32) {
        return OWNER_ROLE;
    }

    function grantRole(bytes32 role, address account) external onlyRole(OWNER_ROLE) {
        _grant(role, account);
    }

    function revokeRole(bytes32 role, address account) external onlyRole(OWNER_ROLE) {
        _revoke(role, account);
    }

    function renounceRole(bytes32 role, address callerConfirmation) external {
        if (callerConfirmation != msg.sender) revert AccessControlBadConfirmation();
        _revoke(role, msg.sender);
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        // IAccessControl and IERC165
        return interfaceId == 0x7965db0b || interfaceId == 0x01ffc9a7;
    }

    function _configure(address _asset, uint256 _minimumDepositAmount, uint256 _vettingFeeBPS, uint256 _maxRelayFeeBPS) private {
        if (_vettingFeeBPS >= BPS || _maxRelayFeeBPS >= BPS) revert InvalidFeeBPS();
        AssetConfig storage config = assetConfig[_asset];
        config.minimumDepositAmount = _minimumDepositAmount;
        config.vettingFeeBPS = _vettingFeeBPS;
        config.maxRelayFeeBPS = _maxRelayFeeBPS;
        emit PoolConfigurationUpdated(config.pool, _asset, _minimumDepositAmount, _vettingFeeBPS, _maxRelayFeeBPS);
    }

    function _grant(bytes32 role, address account) private {
        if (!members[role][account]) {
            members[role][account] = true;
            emit RoleGranted(role, account, msg.sender);
        }
    }

    function _revoke(bytes32 role, address account) private {
        if (members[role][account]) {
            members[role][account] = false;
            emit RoleRevoked(role, account, msg.sender);
        }
    }
}
