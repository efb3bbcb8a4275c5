import { getAddress, hexToBigInt, hexToNumber, isHex, pad, sliceHex, type Address, type Hex } from 'viem';

/**
 * CCTP v2 message layout (circlefin/evm-cctp-contracts/src/messages/v2/MessageV2.sol):
 *
 *   version 4 @0 | sourceDomain 4 @4 | destinationDomain 4 @8 | nonce 32 @12 | sender 32 @44 |
 *   recipient 32 @76 | destinationCaller 32 @108 | minFinalityThreshold 4 @140 |
 *   finalityThresholdExecuted 4 @144 | messageBody @148
 *
 * and its burn message body (circlefin/evm-cctp-contracts/src/messages/v2/BurnMessageV2.sol):
 *
 *   version 4 @0 | burnToken 32 @4 | mintRecipient 32 @36 | amount 32 @68 | messageSender 32 @100 |
 *   maxFee 32 @132 | feeExecuted 32 @164 | expirationBlock 32 @196 | hookData @228
 *
 * The MessageSent event on the source chain carries nonce = 0 and finalityThresholdExecuted = 0:
 * Circle's attestation service assigns both, so only the message returned by Iris can be minted.
 */

const HEADER_BYTES = 148;
const BURN_BODY_BYTES = 228;

export interface CctpMessageHeader {
  version: number;
  sourceDomain: number;
  destinationDomain: number;
  /** bytes32; the key of MessageTransmitterV2.usedNonces. */
  nonce: Hex;
  sender: Hex;
  recipient: Hex;
  destinationCaller: Hex;
  minFinalityThreshold: number;
  finalityThresholdExecuted: number;
  body: Hex;
}

export interface BurnMessageBody {
  version: number;
  burnToken: Hex;
  mintRecipient: Address;
  amount: bigint;
  messageSender: Hex;
  maxFee: bigint;
  feeExecuted: bigint;
  expirationBlock: bigint;
}

export function parseMessageHeader(message: Hex): CctpMessageHeader {
  const size = byteLength(message, 'message');
  if (size < HEADER_BYTES) throw new Error(`CCTP message too short: ${size} bytes, need at least ${HEADER_BYTES}`);
  return {
    version: hexToNumber(sliceHex(message, 0, 4)),
    sourceDomain: hexToNumber(sliceHex(message, 4, 8)),
    destinationDomain: hexToNumber(sliceHex(message, 8, 12)),
    nonce: sliceHex(message, 12, 44),
    sender: sliceHex(message, 44, 76),
    recipient: sliceHex(message, 76, 108),
    destinationCaller: sliceHex(message, 108, 140),
    minFinalityThreshold: hexToNumber(sliceHex(message, 140, 144)),
    finalityThresholdExecuted: hexToNumber(sliceHex(message, 144, 148)),
    body: size === HEADER_BYTES ? '0x' : sliceHex(message, HEADER_BYTES),
  };
}

export function parseBurnMessageBody(body: Hex): BurnMessageBody {
  const size = byteLength(body, 'burn message body');
  if (size < BURN_BODY_BYTES) throw new Error(`CCTP burn message body too short: ${size} bytes, need at least ${BURN_BODY_BYTES}`);
  return {
    version: hexToNumber(sliceHex(body, 0, 4)),
    burnToken: sliceHex(body, 4, 36),
    mintRecipient: bytes32ToAddress(sliceHex(body, 36, 68)),
    amount: hexToBigInt(sliceHex(body, 68, 100)),
    messageSender: sliceHex(body, 100, 132),
    maxFee: hexToBigInt(sliceHex(body, 132, 164)),
    feeExecuted: hexToBigInt(sliceHex(body, 164, 196)),
    expirationBlock: hexToBigInt(sliceHex(body, 196, 228)),
  };
}

/** An EVM address as CCTP's bytes32 (left-padded with 12 zero bytes). */
export function addressToBytes32(address: Address): Hex {
  return pad(getAddress(address), { size: 32 }).toLowerCase() as Hex;
}

export function bytes32ToAddress(value: Hex): Address {
  return getAddress(sliceHex(value, 12, 32));
}

function byteLength(value: Hex, what: string): number {
  if (!isHex(value, { strict: true }) || value.length % 2 !== 0) throw new Error(`CCTP ${what} is not even-length hex`);
  return (value.length - 2) / 2;
}
