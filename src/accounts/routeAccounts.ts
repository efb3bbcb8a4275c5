import { createHmac, pbkdf2Sync } from 'node:crypto';
import type { MasterKeys, Secret } from '@0xbow/privacy-pools-core-sdk';
import { secp256k1 } from '@noble/curves/secp256k1';
import { type Address, type LocalAccount, bytesToHex, numberToHex } from 'viem';
import { HDKey, privateKeyToAccount, publicKeyToAddress } from 'viem/accounts';

/**
 * The pool's master keys: field elements from domain-separated HMAC-SHA256s under the seed (in memory here, inside the
 * token for src/signer/pkcs11/tokenSigner.ts, which gives the same keys for an imported mnemonic's seed).
 */
export function poolMasterKeysFrom(hmacOfSeed: (purpose: string) => Uint8Array): MasterKeys {
  const fieldKey = (purpose: string) => (bytesToBigInt(hmacOfSeed(purpose)) % SNARK_SCALAR_FIELD) as Secret;
  return {
    masterNullifier: fieldKey('private-route/privacy-pools/master-nullifier'),
    masterSecret: fieldKey('private-route/privacy-pools/master-secret'),
  };
}

/** Order of the BN254 scalar field, which the pool's circuits work in. */
const SNARK_SCALAR_FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/**
 * Per-route accounts derived from a role key and the route's account index. Each role has its own key so a
 * route's deposit, hub and exit addresses are unrelated on chain:
 *   deposit  k1 · t(c1, i)   (source chain, the address the sender funds)
 *   hub      k2 · t(c2, i)   (hub chain, receives the bridge-in and deposits into the pool)
 *   exit     k3 · t(c3, i)   (hub chain; burn-and-mint mode: receives the pool withdrawal and burns it;
 *                             deposit-address mode: only where a refunded bridge-out order returns funds)
 * where kr and its chain code cr are the BIP-32 account m/44'/60'/r' of the mnemonic (or a key generated in the
 * signer's PKCS#11 token), and t is routeKeyTweak. A multiple rather than BIP-32's sum: an HSM holding only kr
 * can sign for kr · t (sign the digest divided by t, multiply s by t: src/signer/pkcs11/tweakedSignature.ts), where
 * no PKCS#11 mechanism adds to a key inside the token. Addresses stay public derivations of the role's xpub.
 */
export type RouteAccountRole = 'deposit' | 'hub' | 'exit';

export const ROUTE_ACCOUNT_ROLES: readonly RouteAccountRole[] = ['deposit', 'hub', 'exit'];

/**
 * The roles whose addresses the API hands out. The exit accounts receive the pool withdrawals: their xpub stays
 * with the signer and the worker, so nothing the API holds ties a route's withdrawal to its deposit.
 */
export type ApiAccountRole = 'deposit' | 'hub';

const ROLE_ACCOUNT_INDEX: Record<RouteAccountRole, number> = { deposit: 1, hub: 2, exit: 3 };

/** The hardened BIP-44 account of a role (from a mnemonic), whose extended public key (xpub) derives every route's address of that role. */
export const roleAccountPath = (role: RouteAccountRole) => `m/44'/60'/${ROLE_ACCOUNT_INDEX[role]}'`;

/** One extended public key per role (BIP-32 "xpub…" at roleAccountPath): addresses only, no key. */
export type RouteAccountXpubs = Record<RouteAccountRole, string>;

/** The largest non-hardened BIP-32 child index. */
export const MAX_ACCOUNT_INDEX = 2 ** 31 - 1;

export interface RouteAccounts {
  deposit: LocalAccount;
  hub: LocalAccount;
  exit: LocalAccount;
}

export type RouteAddresses<R extends RouteAccountRole = RouteAccountRole> = Record<R, Address>;

/** A route's addresses from the roles' xpubs, holding no key: the API's book has the deposit and hub roles only. */
export interface RouteAddressBook<R extends RouteAccountRole = RouteAccountRole> {
  routeAddresses(accountIndex: number): RouteAddresses<R>;
}

/** The worker's view: accounts that sign (locally or through the signer process) for each route. */
export interface RouteKeyring extends RouteAddressBook {
  routeAccounts(accountIndex: number): RouteAccounts;
}

/** The mnemonic itself, in memory: the local signer's (development, and the signer process). */
export interface MnemonicKeyring extends RouteKeyring {
  /** One role's account of a route (what the signer signs with). */
  routeAccount(role: RouteAccountRole, accountIndex: number): LocalAccount;
  xpubs(): RouteAccountXpubs;
  /**
   * The privacy pool's master keys: every route's note secrets derive from them and the route's account
   * index (Privacy Pools' generateDepositSecrets), so nothing secret about a note is ever stored.
   */
  poolMasterKeys(): MasterKeys;
}

export function createRouteKeyring(mnemonic: string): MnemonicKeyring {
  const seed = mnemonicToSeed(mnemonic);
  const root = HDKey.fromMasterSeed(seed);
  const poolKeys = poolMasterKeysFrom((purpose) => createHmac('sha256', seed).update(purpose).digest());
  const roleKeys = Object.fromEntries(ROUTE_ACCOUNT_ROLES.map((role) => [role, root.derive(roleAccountPath(role))])) as Record<RouteAccountRole, HDKey>;
  const derive = (role: RouteAccountRole, index: number) => {
    const { privateKey, chainCode } = roleKeys[role];
    if (!privateKey || !chainCode) throw new Error(`the ${role} role key has no private key`);
    const key = (bytesToBigInt(privateKey) * routeKeyTweak(chainCode, index)) % CURVE_ORDER;
    return privateKeyToAccount(numberToHex(key, { size: 32 }));
  };

  const routeAccounts = (accountIndex: number): RouteAccounts => {
    checkAccountIndex(accountIndex);
    return { deposit: derive('deposit', accountIndex), hub: derive('hub', accountIndex), exit: derive('exit', accountIndex) };
  };
  const xpubs = Object.fromEntries(ROUTE_ACCOUNT_ROLES.map((role) => [role, roleKeys[role].publicExtendedKey])) as RouteAccountXpubs;

  return {
    routeAccounts,
    routeAccount: derive,
    routeAddresses(accountIndex) {
      const accounts = routeAccounts(accountIndex);
      return { deposit: accounts.deposit.address, hub: accounts.hub.address, exit: accounts.exit.address };
    },
    xpubs: () => ({ ...xpubs }),
    poolMasterKeys: () => poolKeys,
  };
}

// Indexes are kept to BIP-32's non-hardened range (to 2^31 - 1); the route_account_index sequence would have to
// hand out two billion routes to get there.
export function checkAccountIndex(accountIndex: number): void {
  if (!Number.isSafeInteger(accountIndex) || accountIndex < 0 || accountIndex > MAX_ACCOUNT_INDEX) {
    throw new RangeError(`account index ${accountIndex} cannot be derived: it must be an integer from 0 to ${MAX_ACCOUNT_INDEX}`);
  }
}

/** An extended public key that is a BIP-32 xpub (mainnet version bytes) of an account, not a private xprv. */
export function parseXpub(xpub: string): HDKey {
  if (!xpub.startsWith('xpub')) throw new Error('must be an extended public key starting with "xpub"');
  const key = HDKey.fromExtendedKey(xpub);
  if (key.privateKey) throw new Error('must be an extended public key, not a private one');
  return key;
}

/** The order of secp256k1's group: private keys and tweaks are integers modulo it. */
export const CURVE_ORDER = secp256k1.CURVE.n;

/**
 * The scalar t that turns a role key into route `index`'s key (key · t): HMAC-SHA256 under the role's chain code of
 * a domain tag and the index, modulo the group order. Public to whoever holds the role's xpub, like BIP-32's.
 */
export function routeKeyTweak(chainCode: Uint8Array, index: number): bigint {
  checkAccountIndex(index);
  const serializedIndex = Buffer.alloc(4);
  serializedIndex.writeUInt32BE(index);
  const mac = createHmac('sha256', chainCode).update('private-route/route-account/v1\0').update(serializedIndex).digest();
  const tweak = bytesToBigInt(mac) % CURVE_ORDER;
  if (tweak === 0n) throw new Error(`account index ${index} has no key (its tweak is zero; skip it)`);
  return tweak;
}

/** A route account's public key: the role's public key times the route's tweak. No private key is involved. */
export function routeAccountAddress(rolePublicKey: Uint8Array, chainCode: Uint8Array, index: number): Address {
  const point = secp256k1.ProjectivePoint.fromHex(rolePublicKey).multiply(routeKeyTweak(chainCode, index));
  // viem's publicKeyToAddress hashes the uncompressed point (0x04 || x || y).
  return publicKeyToAddress(bytesToHex(point.toRawBytes(false)));
}

/** Route addresses from the roles' xpubs (their public keys and chain codes): see routeKeyTweak. */
export function createRouteAddressBook<R extends RouteAccountRole>(xpubs: Record<R, string>): RouteAddressBook<R> {
  const roles = Object.keys(xpubs) as R[];
  const keys = Object.fromEntries(roles.map((role) => [role, parseXpub(xpubs[role])])) as Record<R, HDKey>;
  const addressOf = (role: R, index: number) => {
    const { publicKey, chainCode } = keys[role];
    if (!publicKey || !chainCode) throw new Error(`the ${role} xpub has no public key`);
    return routeAccountAddress(publicKey, chainCode, index);
  };
  return {
    routeAddresses(accountIndex) {
      checkAccountIndex(accountIndex);
      return Object.fromEntries(roles.map((role) => [role, addressOf(role, accountIndex)])) as RouteAddresses<R>;
    },
  };
}

/** BIP-39 seed: PBKDF2-HMAC-SHA512 of the NFKD mnemonic, salt "mnemonic", 2048 rounds. Computed once per process. */
export function mnemonicToSeed(mnemonic: string): Uint8Array {
  const normalized = mnemonic.trim().split(/\s+/).join(' ').normalize('NFKD');
  return new Uint8Array(pbkdf2Sync(normalized, 'mnemonic', 2048, 64, 'sha512'));
}

const bytesToBigInt = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
