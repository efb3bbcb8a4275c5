// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface IERC20Minimal {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// @title DevnetPrivacyPool
/// @notice Devnet stand-in for a Railgun-like privacy pool on the hub chain. A shield deposit
/// creates a note keyed by an opaque commitment; the operator (standing in for the private
/// transaction proof) later unshields the whole note to any address. Both directions charge a
/// basis-point fee to the treasury, rounded down, like Railgun.
contract DevnetPrivacyPool {
    struct Note {
        address token;
        uint256 value;
        bool spent;
    }

    uint16 private constant BPS_DENOMINATOR = 10_000;

    address public immutable operator;
    address public immutable treasury;
    uint16 public immutable shieldFeeBps;
    uint16 public immutable unshieldFeeBps;

    /// @notice Net (after shield fee) value of each note. token == address(0) means unused.
    mapping(bytes32 => Note) public notes;

    event Shielded(bytes32 indexed commitment, address indexed token, uint256 value, uint256 fee);
    event Unshielded(
        bytes32 indexed commitment, address indexed token, address indexed to, uint256 amount, uint256 fee
    );

    error NotOperator();
    error ZeroAmount();
    error ZeroAddress();
    error FeeTooHigh();
    error CommitmentUsed(bytes32 commitment);
    error UnknownNote(bytes32 commitment);
    error NoteSpent(bytes32 commitment);
    error TransferFailed(address token);

    modifier onlyOperator() {
        if (msg.sender != operator) revert NotOperator();
        _;
    }

    constructor(address operator_, address treasury_, uint16 shieldFeeBps_, uint16 unshieldFeeBps_) {
        if (operator_ == address(0) || treasury_ == address(0)) revert ZeroAddress();
        if (shieldFeeBps_ > BPS_DENOMINATOR || unshieldFeeBps_ > BPS_DENOMINATOR) revert FeeTooHigh();
        operator = operator_;
        treasury = treasury_;
        shieldFeeBps = shieldFeeBps_;
        unshieldFeeBps = unshieldFeeBps_;
    }

    function shield(address token, uint256 amount, bytes32 commitment) external {
        if (token == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        if (notes[commitment].token != address(0)) revert CommitmentUsed(commitment);

        uint256 fee = amount * shieldFeeBps / BPS_DENOMINATOR;
        uint256 value = amount - fee;
        notes[commitment] = Note({token: token, value: value, spent: false});

        _call(token, abi.encodeCall(IERC20Minimal.transferFrom, (msg.sender, address(this), amount)));
        if (fee > 0) _call(token, abi.encodeCall(IERC20Minimal.transfer, (treasury, fee)));
        emit Shielded(commitment, token, value, fee);
    }

    function unshield(bytes32 commitment, address to) external onlyOperator {
        if (to == address(0)) revert ZeroAddress();
        Note storage note = notes[commitment];
        if (note.token == address(0)) revert UnknownNote(commitment);
        if (note.spent) revert NoteSpent(commitment);
        note.spent = true;

        address token = note.token;
        uint256 fee = note.value * unshieldFeeBps / BPS_DENOMINATOR;
        uint256 amount = note.value - fee;

        if (fee > 0) _call(token, abi.encodeCall(IERC20Minimal.transfer, (treasury, fee)));
        _call(token, abi.encodeCall(IERC20Minimal.transfer, (to, amount)));
        emit Unshielded(commitment, token, to, amount, fee);
    }

    /// @dev Calls an ERC20 transfer function, accepting tokens that return nothing (e.g. USDT)
    /// as well as those returning a bool.
    function _call(address token, bytes memory data) private {
        (bool ok, bytes memory ret) = token.call(data);
        if (!ok || token.code.length == 0 || (ret.length != 0 && !abi.decode(ret, (bool)))) {
            revert TransferFailed(token);
        }
    }
}
