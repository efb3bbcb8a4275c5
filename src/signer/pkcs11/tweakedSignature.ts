import { secp256k1 } from '@noble/curves/secp256k1';
import { type Address, type Hex, bytesToHex, hexToBigInt, numberToHex } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import { CURVE_ORDER } from '../../accounts/routeAccounts.ts';

/**
 * ECDSA for a key k·t when the token holds only k (src/accounts/routeAccounts.ts derives route keys so).
 * For a digest z, the token signs z·t⁻¹ with k, giving (r, s′) with s′ = u⁻¹(z·t⁻¹ + r·k) for its nonce u;
 * then s = s′·t = u⁻¹(z + r·k·t) is the signature of z by k·t, with the same r. Pure: the token is a parameter.
 */

/** What the token signs for a digest under tweak t: z·t⁻¹ mod n, as 32 big-endian bytes (CKM_ECDSA's input). */
export function digestForToken(digest: Hex, tweak: bigint): Uint8Array {
  const z = hexToBigInt(digest) % CURVE_ORDER;
  const scaled = (z * modInverse(tweak, CURVE_ORDER)) % CURVE_ORDER;
  return hexToBytes32(scaled);
}

/**
 * The signature by k·t from the token's r‖s′ (CKM_ECDSA's 64-byte output): s = s′·t, in the low half of the order
 * (Ethereum refuses high s since EIP-2), with the recovery bit that gives `address` back. Throws when neither bit
 * does: the token signed with another key than the one its public key names.
 */
export function signatureFromToken(opts: { digest: Hex; tokenSignature: Uint8Array; tweak: bigint; address: Address }): { r: Hex; s: Hex; yParity: 0 | 1 } {
  if (opts.tokenSignature.length !== 64) throw new Error(`the token returned a ${opts.tokenSignature.length}-byte ECDSA signature, not r‖s of 64 bytes`);
  const r = bytesToBigIntBE(opts.tokenSignature.subarray(0, 32));
  let s = (bytesToBigIntBE(opts.tokenSignature.subarray(32)) * opts.tweak) % CURVE_ORDER;
  if (s > CURVE_ORDER / 2n) s = CURVE_ORDER - s;
  const z = hexToBigInt(opts.digest) % CURVE_ORDER;
  for (const yParity of [0, 1] as const) {
    const signature = new secp256k1.Signature(r, s).addRecoveryBit(yParity);
    let recovered: Address;
    try {
      recovered = publicKeyToAddress(bytesToHex(signature.recoverPublicKey(numberToHex(z, { size: 32 }).slice(2)).toRawBytes(false)));
    } catch {
      continue;
    }
    if (recovered.toLowerCase() === opts.address.toLowerCase()) return { r: numberToHex(r, { size: 32 }), s: numberToHex(s, { size: 32 }), yParity };
  }
  throw new Error(`the token's signature does not recover to ${opts.address}: the token's key is not the one its public key names`);
}

function modInverse(value: bigint, modulus: bigint): bigint {
  // Extended Euclid; the order is prime, so every non-zero tweak has an inverse.
  let [a, b, x, y] = [((value % modulus) + modulus) % modulus, modulus, 1n, 0n];
  if (a === 0n) throw new RangeError('a zero tweak has no inverse');
  while (b !== 0n) {
    const q = a / b;
    [a, b] = [b, a - q * b];
    [x, y] = [y, x - q * y];
  }
  return ((x % modulus) + modulus) % modulus;
}

const hexToBytes32 = (value: bigint) => Buffer.from(numberToHex(value, { size: 32 }).slice(2), 'hex');
const bytesToBigIntBE = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
