import { createHash } from 'node:crypto';
import { LeanIMT } from '@zk-kit/lean-imt';
import { poseidon2 } from 'poseidon-lite';

/**
 * Root of the LeanIMT over `leaves` with Poseidon(2) nodes, as the circuits and the SDK build it; 0 for no
 * leaves, as the contracts' InternalLeanIMT answers for an empty tree.
 */
export function leanImtRoot(leaves: readonly bigint[]): bigint {
  if (leaves.length === 0) return 0n;
  return new LeanIMT<bigint>((a, b) => poseidon2([a, b]), [...leaves]).root;
}

/**
 * A placeholder for the IPFS CID that `Entrypoint.updateRoot` records with each root (the real ASP pins
 * the association set there). It is the CIDv1 (raw, sha2-256, base32: 59 characters, within the contract's
 * 32..64) that the JSON list of the leaves would have as a raw IPFS block; the emulator publishes nothing.
 */
export function placeholderCid(leaves: readonly bigint[]): string {
  const digest = createHash('sha256')
    .update(JSON.stringify(leaves.map((l) => l.toString())))
    .digest();
  // CIDv1 = version 0x01, codec raw 0x55, multihash sha2-256 (0x12) of 32 bytes (0x20); multibase 'b' = base32.
  return `b${base32(Buffer.concat([Buffer.from([0x01, 0x55, 0x12, 0x20]), digest]))}`;
}

/** RFC 4648 base32, lowercase, unpadded (the multibase 'b' alphabet). */
function base32(bytes: Uint8Array): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += alphabet[(buffer << (5 - bits)) & 31];
  return out;
}
