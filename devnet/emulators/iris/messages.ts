import { bytesToHex, getAddress, hexToBigInt, hexToBytes, hexToNumber, numberToHex, size, slice, type Address, type Hex } from 'viem';

/**
 * CCTP v2's message formats (circlefin/evm-cctp-contracts/src/messages/v2/MessageV2.sol and BurnMessageV2.sol):
 * packed fields at fixed byte offsets, the body / hook data last.
 */
const HEADER = {
  version: 0,
  sourceDomain: 4,
  destinationDomain: 8,
  nonce: 12,
  sender: 44,
  recipient: 76,
  destinationCaller: 108,
  minFinalityThreshold: 140,
  finalityThresholdExecuted: 144,
  messageBody: 148,
} as const;

const BURN = {
  version: 0,
  burnToken: 4,
  mintRecipient: 36,
  amount: 68,
  messageSender: 100,
  maxFee: 132,
  feeExecuted: 164,
  expirationBlock: 196,
  hookData: 228,
} as const;

export interface MessageV2 {
  version: number;
  sourceDomain: number;
  destinationDomain: number;
  nonce: Hex;
  sender: Hex;
  recipient: Hex;
  destinationCaller: Hex;
  minFinalityThreshold: number;
  finalityThresholdExecuted: number;
  messageBody: Hex;
}

export interface BurnMessageV2 {
  version: number;
  burnToken: Hex;
  mintRecipient: Hex;
  amount: bigint;
  messageSender: Hex;
  maxFee: bigint;
  feeExecuted: bigint;
  expirationBlock: bigint;
  hookData: Hex;
}

export function decodeMessage(message: Hex): MessageV2 {
  if (size(message) < HEADER.messageBody) throw new Error(`CCTP message is ${size(message)} bytes, shorter than its header`);
  return {
    version: uint32(message, HEADER.version),
    sourceDomain: uint32(message, HEADER.sourceDomain),
    destinationDomain: uint32(message, HEADER.destinationDomain),
    nonce: word(message, HEADER.nonce),
    sender: word(message, HEADER.sender),
    recipient: word(message, HEADER.recipient),
    destinationCaller: word(message, HEADER.destinationCaller),
    minFinalityThreshold: uint32(message, HEADER.minFinalityThreshold),
    finalityThresholdExecuted: uint32(message, HEADER.finalityThresholdExecuted),
    messageBody: rest(message, HEADER.messageBody),
  };
}

/** The burn message in a message body, or null when the body is too short to be one. */
export function decodeBurnMessage(body: Hex): BurnMessageV2 | null {
  if (size(body) < BURN.hookData) return null;
  return {
    version: uint32(body, BURN.version),
    burnToken: word(body, BURN.burnToken),
    mintRecipient: word(body, BURN.mintRecipient),
    amount: hexToBigInt(word(body, BURN.amount)),
    messageSender: word(body, BURN.messageSender),
    maxFee: hexToBigInt(word(body, BURN.maxFee)),
    feeExecuted: hexToBigInt(word(body, BURN.feeExecuted)),
    expirationBlock: hexToBigInt(word(body, BURN.expirationBlock)),
    hookData: rest(body, BURN.hookData),
  };
}

/**
 * The message as the attestation service signs it: the emitted message with the fields it leaves empty
 * filled in (nonce, finalityThresholdExecuted and, for a burn, feeExecuted and expirationBlock).
 */
export function fillMessage(
  emitted: Hex,
  fill: { nonce: Hex; finalityThresholdExecuted: number; burn?: { feeExecuted: bigint; expirationBlock: bigint } },
): Hex {
  const bytes = hexToBytes(emitted);
  bytes.set(hexToBytes(fill.nonce), HEADER.nonce);
  bytes.set(hexToBytes(numberToHex(fill.finalityThresholdExecuted, { size: 4 })), HEADER.finalityThresholdExecuted);
  if (fill.burn) {
    bytes.set(hexToBytes(numberToHex(fill.burn.feeExecuted, { size: 32 })), HEADER.messageBody + BURN.feeExecuted);
    bytes.set(hexToBytes(numberToHex(fill.burn.expirationBlock, { size: 32 })), HEADER.messageBody + BURN.expirationBlock);
  }
  return bytesToHex(bytes);
}

/** Iris's `decodedMessage`: numbers as decimal strings, addresses as 20-byte addresses. */
export function irisDecodedMessage(message: Hex) {
  const m = decodeMessage(message);
  const burn = decodeBurnMessage(m.messageBody);
  return {
    sourceDomain: String(m.sourceDomain),
    destinationDomain: String(m.destinationDomain),
    nonce: m.nonce,
    sender: wordToAddress(m.sender),
    recipient: wordToAddress(m.recipient),
    destinationCaller: wordToAddress(m.destinationCaller),
    minFinalityThreshold: String(m.minFinalityThreshold),
    finalityThresholdExecuted: String(m.finalityThresholdExecuted),
    messageBody: m.messageBody,
    ...(burn && {
      decodedMessageBody: {
        burnToken: wordToAddress(burn.burnToken),
        mintRecipient: wordToAddress(burn.mintRecipient),
        amount: String(burn.amount),
        messageSender: wordToAddress(burn.messageSender),
        maxFee: String(burn.maxFee),
        feeExecuted: String(burn.feeExecuted),
        expirationBlock: String(burn.expirationBlock),
        hookData: burn.hookData,
      },
    }),
  };
}

function uint32(data: Hex, offset: number): number {
  return hexToNumber(slice(data, offset, offset + 4));
}

function word(data: Hex, offset: number): Hex {
  return slice(data, offset, offset + 32);
}

function rest(data: Hex, offset: number): Hex {
  return size(data) === offset ? '0x' : slice(data, offset);
}

function wordToAddress(value: Hex): Address {
  return getAddress(slice(value, 12));
}
