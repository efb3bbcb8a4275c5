import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { secp256k1 } from '@noble/curves/secp256k1';
import { type Hex, keccak256, numberToHex, recoverAddress, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { CURVE_ORDER, routeKeyTweak } from '../../src/accounts/routeAccounts.ts';
import { digestForToken, signatureFromToken } from '../../src/signer/pkcs11/tweakedSignature.ts';

/** A stand-in for the token's CKM_ECDSA: signs the raw 32 bytes with k and a random nonce, high s left as it comes (tokens do not normalise). */
const tokenSign = (roleKey: bigint, input: Uint8Array) => {
  const signature = secp256k1.sign(input, numberToHex(roleKey, { size: 32 }).slice(2), { prehash: false, lowS: false, extraEntropy: true });
  return signature.toCompactRawBytes();
};
const addressOf = (key: bigint) => privateKeyToAccount(numberToHex(key, { size: 32 })).address;

describe('ECDSA for a route key k·t from a token that holds only k', () => {
  const cases: { name: string; roleKey: bigint; tweak: bigint; digest: Hex }[] = [
    { name: 'tweak 1 (a shared account: the gas account, the pool relayer)', roleKey: 7n, tweak: 1n, digest: keccak256(toHex('tx')) },
    {
      name: "a route's tweak from a chain code",
      roleKey: 0xabcdefn,
      tweak: routeKeyTweak(new Uint8Array(32).fill(3), 42),
      digest: keccak256(toHex('route 42')),
    },
    {
      name: 'the largest account index',
      roleKey: CURVE_ORDER - 2n,
      tweak: routeKeyTweak(new Uint8Array(32).fill(9), 2 ** 31 - 1),
      digest: keccak256(toHex('last')),
    },
    { name: 'a digest above the group order (reduced first, as ECDSA does)', roleKey: 12345n, tweak: 99n, digest: `0x${'f'.repeat(64)}` },
    { name: 'tweak n − 1', roleKey: 5n, tweak: CURVE_ORDER - 1n, digest: keccak256(toHex('minus one')) },
  ];
  for (const { name, roleKey, tweak, digest } of cases) {
    test(name, async () => {
      const routeKey = (roleKey * tweak) % CURVE_ORDER;
      const address = addressOf(routeKey);
      // Many signatures: the token's nonce is random, so high and low s both come up and both bits are needed.
      const parities = new Set<number>();
      for (let i = 0; i < 24; i++) {
        const signature = signatureFromToken({ digest, tokenSignature: tokenSign(roleKey, digestForToken(digest, tweak)), tweak, address });
        assert.ok(BigInt(signature.s) <= CURVE_ORDER / 2n, 'low s (EIP-2)');
        assert.equal(await recoverAddress({ hash: digest, signature }), address);
        parities.add(signature.yParity);
      }
      assert.deepEqual([...parities].sort(), [0, 1]);
    });
  }

  test('a token that signed with another key is caught, never returned as a signature', () => {
    const digest = keccak256(toHex('x'));
    const tweak = routeKeyTweak(new Uint8Array(32).fill(1), 5);
    assert.throws(
      () =>
        signatureFromToken({ digest, tokenSignature: tokenSign(11n, digestForToken(digest, tweak)), tweak, address: addressOf((10n * tweak) % CURVE_ORDER) }),
      /does not recover to 0x/,
    );
    assert.throws(() => signatureFromToken({ digest, tokenSignature: new Uint8Array(63), tweak, address: addressOf(1n) }), /63-byte ECDSA signature/);
  });

  test('route tweaks: deterministic, distinct by index and by chain code, never zero, refused past BIP-32 range', () => {
    const a = new Uint8Array(32).fill(1);
    const b = new Uint8Array(32).fill(2);
    assert.equal(routeKeyTweak(a, 1), routeKeyTweak(a, 1));
    const seen = new Set([0, 1, 2, 3, 1000].flatMap((i) => [routeKeyTweak(a, i), routeKeyTweak(b, i)]));
    assert.equal(seen.size, 10);
    for (const t of seen) assert.ok(t > 0n && t < CURVE_ORDER);
    assert.throws(() => routeKeyTweak(a, 2 ** 31), /cannot be derived/);
    assert.throws(() => routeKeyTweak(a, -1), /cannot be derived/);
  });
});
