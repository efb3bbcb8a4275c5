import { getAddress, type Address } from 'viem';

/** A recipient nobody has used: 20 random bytes, checksummed. */
export function freshAddress(): Address {
  return getAddress(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(20))).toString('hex')}`);
}
