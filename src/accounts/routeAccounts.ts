import { ECDH, createHmac, pbkdf2Sync } from 'node:crypto';
import type { MasterKeys, Secret } from '@0xbow/privacy-pools-core-sdk';
import { type Address, type LocalAccount, bytesToHex } from 'viem';
import { HDKey, privateKeyToAccount, publicKeyToAddress } from 'viem/accounts';

/** Order of the BN254 scalar field, which the pool's circuits work in. */
const SNARK_SCALAR_FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/**
 * Per-route accounts derived from the signer's secret (BIP-39 mnemonic) and the route's account index.
 * Each role has its own BIP-44 account so a route's deposit, hub and exit addresses are unrelated on chain:
 *   deposit m/44'/60'/1'/0/i   (source chain, the address the sender funds)
 *   hub     m/44'/60'/2'/0/i   (hub chain, receives the bridge-in and deposits into the pool)
 *   exit    m/44'/60'/3'/0/i   (hub chain; burn-and-mint mode: receives the pool withdrawal and burns it;
 *                               deposit-address mode: only where a refunded bridge-out order returns funds)
 */
export type RouteAccountRole = 'deposit' | 'hub' | 'exit';

export const ROUTE_ACCOUNT_ROLES: readonly RouteAccountRole[] = ['deposit', 'hub', 'exit'];

/**
 * The roles whose addresses the API hands out. The exit accounts receive the pool withdrawals: their xpub stays
 * with the signer and the worker, so nothing the API holds ties a route's withdrawal to its deposit.
 */
export type ApiAccountRole = 'deposit' | 'hub';

const ROLE_ACCOUNT_INDEX: Record<RouteAccountRole, number> = { deposit: 1, hub: 2, exit: 3 };

/** The hardened BIP-44 account of a role, whose extended public key (xpub) derives every route's address of that role. */
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
  // Field elements from domain-separated HMACs of the seed; no other key derives from these.
  const fieldKey = (purpose: string) => (BigInt(`0x${createHmac('sha256', seed).update(purpose).digest('hex')}`) % SNARK_SCALAR_FIELD) as Secret;
  const poolKeys: MasterKeys = {
    masterNullifier: fieldKey('private-route/privacy-pools/master-nullifier'),
    masterSecret: fieldKey('private-route/privacy-pools/master-secret'),
  };
  // Each role's external chain m/44'/60'/r'/0 once; a route's account is then one child step from it.
  const chains = Object.fromEntries(ROUTE_ACCOUNT_ROLES.map((role) => [role, root.derive(`${roleAccountPath(role)}/0`)])) as Record<RouteAccountRole, HDKey>;
  const derive = (role: RouteAccountRole, index: number) => {
    checkAccountIndex(index);
    const key = chains[role].deriveChild(index).privateKey;
    if (!key) throw new Error(`the ${role} account ${index} has no private key`);
    return privateKeyToAccount(bytesToHex(key));
  };

  const routeAccounts = (accountIndex: number): RouteAccounts => {
    checkAccountIndex(accountIndex);
    return { deposit: derive('deposit', accountIndex), hub: derive('hub', accountIndex), exit: derive('exit', accountIndex) };
  };
  const xpubs = Object.fromEntries(ROUTE_ACCOUNT_ROLES.map((role) => [role, root.derive(roleAccountPath(role)).publicExtendedKey])) as RouteAccountXpubs;

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

// BIP-32 non-hardened child indexes end at 2^31 - 1; the route_account_index sequence would have to hand
// out two billion routes to get there.
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

/**
 * Route addresses from the roles' xpubs: public child 0 (external chain), then the account index, as
 * m/44'/60'/r'/0/i derives them from the mnemonic. No private key is involved.
 */
export function createRouteAddressBook<R extends RouteAccountRole>(xpubs: Record<R, string>): RouteAddressBook<R> {
  const roles = Object.keys(xpubs) as R[];
  const chains = Object.fromEntries(roles.map((role) => [role, parseXpub(xpubs[role]).deriveChild(0)])) as Record<R, HDKey>;
  const addressOf = (role: R, index: number) => {
    const compressed = chains[role].deriveChild(index).publicKey;
    if (!compressed) throw new Error(`the ${role} xpub derived no public key`);
    // viem's publicKeyToAddress hashes the uncompressed point (0x04 || x || y).
    const uncompressed = ECDH.convertKey(Buffer.from(compressed), 'secp256k1', undefined, undefined, 'uncompressed') as Buffer;
    return publicKeyToAddress(bytesToHex(uncompressed));
  };
  return {
    routeAddresses(accountIndex) {
      checkAccountIndex(accountIndex);
      return Object.fromEntries(roles.map((role) => [role, addressOf(role, accountIndex)])) as RouteAddresses<R>;
    },
  };
}

/** BIP-39 seed: PBKDF2-HMAC-SHA512 of the NFKD mnemonic, salt "mnemonic", 2048 rounds. Computed once per process. */
function mnemonicToSeed(mnemonic: string): Uint8Array {
  const normalized = mnemonic.trim().split(/\s+/).join(' ').normalize('NFKD');
  return new Uint8Array(pbkdf2Sync(normalized, 'mnemonic', 2048, 64, 'sha512'));
}
