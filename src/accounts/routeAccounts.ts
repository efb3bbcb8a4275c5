import { createHmac, pbkdf2Sync } from 'node:crypto';
import type { Hex } from 'viem';
import { HDKey, hdKeyToAccount, type HDAccount } from 'viem/accounts';

/**
 * Per-route accounts derived from the signer's secret (BIP-39 mnemonic) and the route's account index.
 * Each role has its own BIP-44 account so a route's deposit, hub and exit addresses are unrelated on chain:
 *   deposit m/44'/60'/1'/0/i   (source chain, the address the sender funds)
 *   hub     m/44'/60'/2'/0/i   (hub chain, receives the bridge-in and shields)
 *   exit    m/44'/60'/3'/0/i   (hub chain, receives the unshield and pays the bridge-out; never the shielder)
 */
export type RouteAccountRole = 'deposit' | 'hub' | 'exit';

const ROLE_ACCOUNT_INDEX: Record<RouteAccountRole, number> = { deposit: 1, hub: 2, exit: 3 };

export interface RouteAccounts {
  deposit: HDAccount;
  hub: HDAccount;
  exit: HDAccount;
}

export interface RouteKeyring {
  routeAccounts(accountIndex: number): RouteAccounts;
  /** Unlinkable, deterministic pool commitment for a route (HMAC of the routeId under the signer's secret). */
  shieldCommitment(routeId: string): Hex;
}

export function createRouteKeyring(mnemonic: string): RouteKeyring {
  const seed = mnemonicToSeed(mnemonic);
  const root = HDKey.fromMasterSeed(seed);
  const commitmentKey = createHmac('sha256', seed).update('private-route/shield-commitment').digest();
  const derive = (role: RouteAccountRole, index: number) =>
    hdKeyToAccount(root, { accountIndex: ROLE_ACCOUNT_INDEX[role], changeIndex: 0, addressIndex: index });

  return {
    routeAccounts(accountIndex) {
      if (!Number.isSafeInteger(accountIndex) || accountIndex < 0) throw new RangeError(`bad account index ${accountIndex}`);
      return { deposit: derive('deposit', accountIndex), hub: derive('hub', accountIndex), exit: derive('exit', accountIndex) };
    },
    shieldCommitment(routeId) {
      return `0x${createHmac('sha256', commitmentKey).update(routeId).digest('hex')}`;
    },
  };
}

/** BIP-39 seed: PBKDF2-HMAC-SHA512 of the NFKD mnemonic, salt "mnemonic", 2048 rounds. Computed once per process. */
function mnemonicToSeed(mnemonic: string): Uint8Array {
  const normalized = mnemonic.trim().split(/\s+/).join(' ').normalize('NFKD');
  return new Uint8Array(pbkdf2Sync(normalized, 'mnemonic', 2048, 64, 'sha512'));
}
