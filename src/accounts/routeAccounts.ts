import { createHmac, pbkdf2Sync } from 'node:crypto';
import type { MasterKeys, Secret } from '@0xbow/privacy-pools-core-sdk';
import { HDKey, hdKeyToAccount, type HDAccount } from 'viem/accounts';

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

const ROLE_ACCOUNT_INDEX: Record<RouteAccountRole, number> = { deposit: 1, hub: 2, exit: 3 };

/** The largest non-hardened BIP-32 child index. */
export const MAX_ACCOUNT_INDEX = 2 ** 31 - 1;

export interface RouteAccounts {
  deposit: HDAccount;
  hub: HDAccount;
  exit: HDAccount;
}

export interface RouteKeyring {
  routeAccounts(accountIndex: number): RouteAccounts;
  /**
   * The privacy pool's master keys: every route's note secrets derive from them and the route's account
   * index (Privacy Pools' generateDepositSecrets), so nothing secret about a note is ever stored.
   */
  poolMasterKeys(): MasterKeys;
}

export function createRouteKeyring(mnemonic: string): RouteKeyring {
  const seed = mnemonicToSeed(mnemonic);
  const root = HDKey.fromMasterSeed(seed);
  // Field elements from domain-separated HMACs of the seed; no other key derives from these.
  const fieldKey = (purpose: string) => (BigInt(`0x${createHmac('sha256', seed).update(purpose).digest('hex')}`) % SNARK_SCALAR_FIELD) as Secret;
  const poolKeys: MasterKeys = { masterNullifier: fieldKey('private-route/privacy-pools/master-nullifier'), masterSecret: fieldKey('private-route/privacy-pools/master-secret') };
  const derive = (role: RouteAccountRole, index: number) =>
    hdKeyToAccount(root, { accountIndex: ROLE_ACCOUNT_INDEX[role], changeIndex: 0, addressIndex: index });

  return {
    routeAccounts(accountIndex) {
      // BIP-32 non-hardened child indexes end at 2^31 - 1; the route_account_index sequence would have to hand
      // out two billion routes to get there.
      if (!Number.isSafeInteger(accountIndex) || accountIndex < 0 || accountIndex > MAX_ACCOUNT_INDEX) {
        throw new RangeError(`account index ${accountIndex} cannot be derived: it must be an integer from 0 to ${MAX_ACCOUNT_INDEX}`);
      }
      return { deposit: derive('deposit', accountIndex), hub: derive('hub', accountIndex), exit: derive('exit', accountIndex) };
    },
    poolMasterKeys: () => poolKeys,
  };
}

/** BIP-39 seed: PBKDF2-HMAC-SHA512 of the NFKD mnemonic, salt "mnemonic", 2048 rounds. Computed once per process. */
function mnemonicToSeed(mnemonic: string): Uint8Array {
  const normalized = mnemonic.trim().split(/\s+/).join(' ').normalize('NFKD');
  return new Uint8Array(pbkdf2Sync(normalized, 'mnemonic', 2048, 64, 'sha512'));
}
