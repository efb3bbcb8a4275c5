import { createHash } from 'node:crypto';
import { bytesToHex, type Address } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import { secp256k1 } from '@noble/curves/secp256k1';
import { routeKeyTweak } from './routeAccounts.ts';

/**
 * The pool relayer's sending accounts: index 0 is the relayer itself (it receives the relay fees), index j ≥ 1 the
 * relayer's key times a public tweak of j, as route accounts derive from their role key (routeAccounts.ts), so a
 * token holding only the relayer's key signs for all of them. They take turns sending withdrawals and mints: one
 * transaction stuck at an account's head then holds up only what that account already signed.
 */
export const MAX_RELAY_SENDERS = 16;
/** How many when the signer is not told (POOL_RELAY_SENDERS). */
export const DEFAULT_RELAY_SENDERS = 3;

/** The tweak of sending account `index` (1 for the relayer itself). */
export function relaySenderTweak(relayerPublicKey: Uint8Array, index: number): bigint {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_RELAY_SENDERS)
    throw new RangeError(`relay sender ${index} does not exist (0 to ${MAX_RELAY_SENDERS - 1})`);
  if (index === 0) return 1n;
  const chainCode = createHash('sha256').update('private-route/relay-senders/v1\0').update(relayerPublicKey).digest();
  return routeKeyTweak(chainCode, index);
}

/** The addresses of the first `count` sending accounts, from the relayer's uncompressed public key. */
export function relaySenderAddresses(relayerPublicKey: Uint8Array, count: number): Address[] {
  const point = secp256k1.ProjectivePoint.fromHex(relayerPublicKey);
  return Array.from({ length: count }, (_, index) =>
    publicKeyToAddress(bytesToHex(point.multiply(relaySenderTweak(relayerPublicKey, index)).toRawBytes(false))),
  );
}

/** The relay sender at `index` (0, the default: the relayer itself) among a signer's, or a RangeError naming the count. */
export function relaySenderAt<T>(senders: readonly T[], index = 0): T {
  const sender = senders[index];
  if (sender === undefined) throw new RangeError(`the signer has ${senders.length} relay senders; ${index} is none of them`);
  return sender;
}
