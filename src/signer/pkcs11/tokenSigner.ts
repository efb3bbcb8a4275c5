import { type Address, type Hex, bytesToHex, keccak256, serializeTransaction } from 'viem';
import { HDKey, publicKeyToAddress } from 'viem/accounts';
import { poolMasterKeysFrom, ROUTE_ACCOUNT_ROLES, type RouteAccountRole, routeAccountAddress, routeKeyTweak } from '../../accounts/routeAccounts.ts';
import type { Signer, SignerAccount, SignerPublicKeys } from '../signer.ts';
import { noteSecretsOf, replayProtected } from '../signing.ts';
import { DEFAULT_RELAY_SENDERS, relaySenderAddresses, relaySenderAt, relaySenderTweak } from '../../accounts/relaySenders.ts';
import type { Pkcs11Token } from './token.ts';
import { digestForToken, signatureFromToken } from './tweakedSignature.ts';

/** What the token holds, by label (src/signer/pkcs11/setup.ts puts them there). */
export const TOKEN_LABELS = {
  roleKey: (role: RouteAccountRole) => `private-route/role/${role}`,
  chainCode: (role: RouteAccountRole) => `private-route/chain-code/${role}`,
  poolSeed: 'private-route/pool-seed',
  gas: 'private-route/gas',
  poolRelayer: 'private-route/pool-relayer',
} as const;

/** The role keys' BIP-44 account numbers (m/44'/60'/r'), kept in the xpubs the token's keys are published as. */
const ROLE_ACCOUNT_NUMBER: Record<RouteAccountRole, number> = { deposit: 1, hub: 2, exit: 3 };
const HARDENED = 0x80000000;

/**
 * The signer whose keys stay in a PKCS#11 token: every signature is made inside it (a route account's as its role
 * key's, src/signer/pkcs11/tweakedSignature.ts). The pool's master keys are MACs of the token's pool seed, computed
 * at start and kept in memory: the circuit needs note secrets outside any token, and the worker proves with them.
 */
export function createTokenSigner(token: Pkcs11Token, relaySenders = DEFAULT_RELAY_SENDERS): Signer {
  const roles = Object.fromEntries(
    ROUTE_ACCOUNT_ROLES.map((role) => {
      const point = token.ecPublicKey(TOKEN_LABELS.roleKey(role));
      const chainCode = token.data(TOKEN_LABELS.chainCode(role));
      return [role, { point, chainCode, xpub: roleXpub(role, point, chainCode) }];
    }),
  ) as Record<RouteAccountRole, { point: Uint8Array; chainCode: Uint8Array; xpub: string }>;
  const gasAddress = publicKeyToAddress(bytesToHex(token.ecPublicKey(TOKEN_LABELS.gas)));
  const relayerPublicKey = token.ecPublicKey(TOKEN_LABELS.poolRelayer);
  const poolRelayerAddresses = relaySenderAddresses(relayerPublicKey, relaySenders);
  const poolRelayerAddress = poolRelayerAddresses[0]!;
  const masterKeys = poolMasterKeysFrom((purpose) => token.hmacSha256(TOKEN_LABELS.poolSeed, new TextEncoder().encode(purpose)));
  const publicKeys: SignerPublicKeys = {
    xpubs: { deposit: roles.deposit.xpub, hub: roles.hub.xpub, exit: roles.exit.xpub },
    gasAddress,
    poolRelayerAddress,
    poolRelayerAddresses,
  };

  const keyOf = (account: SignerAccount): { label: string; tweak: bigint; address: Address } => {
    if (account.role === 'gas') return { label: TOKEN_LABELS.gas, tweak: 1n, address: gasAddress };
    if (account.role === 'poolRelayer') {
      const address = relaySenderAt(poolRelayerAddresses, account.index);
      return { label: TOKEN_LABELS.poolRelayer, tweak: relaySenderTweak(relayerPublicKey, account.index ?? 0), address };
    }
    const { point, chainCode } = roles[account.role];
    return {
      label: TOKEN_LABELS.roleKey(account.role),
      tweak: routeKeyTweak(chainCode, account.index),
      address: routeAccountAddress(point, chainCode, account.index),
    };
  };
  return {
    publicKeys: async () => structuredClone(publicKeys),
    async signTransaction(account, unsignedTransaction) {
      const transaction = replayProtected(unsignedTransaction);
      if (transaction.type === 'eip4844') throw new Error('the signer signs no blob transactions');
      const key = keyOf(account);
      const digest: Hex = keccak256(serializeTransaction(transaction));
      const tokenSignature = token.signDigest(key.label, digestForToken(digest, key.tweak));
      return serializeTransaction(transaction, signatureFromToken({ digest, tokenSignature, tweak: key.tweak, address: key.address }));
    },
    ...noteSecretsOf(masterKeys),
  };
}

/** A role key published as a BIP-32 account xpub: its compressed public key and chain code are what derive addresses. */
function roleXpub(role: RouteAccountRole, uncompressedPoint: Uint8Array, chainCode: Uint8Array): string {
  const compressed = new Uint8Array(33);
  compressed[0] = (uncompressedPoint[64] ?? 0) % 2 === 0 ? 0x02 : 0x03;
  compressed.set(uncompressedPoint.subarray(1, 33), 1);
  return new HDKey({ publicKey: compressed, chainCode, depth: 3, index: HARDENED + ROLE_ACCOUNT_NUMBER[role], parentFingerprint: 0 }).publicExtendedKey;
}
