import { randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1';
import { hexToBytes } from 'viem';
import { HDKey } from 'viem/accounts';
import { mnemonicToSeed, ROUTE_ACCOUNT_ROLES, roleAccountPath } from '../../accounts/routeAccounts.ts';
import type { Pkcs11Token } from './token.ts';
import { TOKEN_LABELS } from './tokenSigner.ts';

/** Keys to import instead of generating them in the token: a mnemonic written down offline, and the two shared keys. */
export interface ImportedKeys {
  mnemonic: string;
  gasPrivateKey: `0x${string}`;
  poolRelayerPrivateKey: `0x${string}`;
}

/**
 * Puts the signer's keys into a token once (`npm run signer:token -- init`). Generated inside it by default: no copy
 * exists anywhere else, so the token's own backup is the only one. Imported from `keys`: the mnemonic is then the
 * backup, and the token holds the same role keys, chain codes and pool seed it derives (the same addresses and notes
 * as SIGNER_MNEMONIC). Refuses a token that holds any of them already: keys are never replaced.
 */
export function initialiseToken(token: Pkcs11Token, keys?: ImportedKeys): { created: string[] } {
  const labels = [
    ...ROUTE_ACCOUNT_ROLES.flatMap((role) => [TOKEN_LABELS.roleKey(role), TOKEN_LABELS.chainCode(role)]),
    TOKEN_LABELS.poolSeed,
    TOKEN_LABELS.gas,
    TOKEN_LABELS.poolRelayer,
  ];
  const present = labels.filter((label) => token.has(label));
  if (present.length > 0) throw new Error(`the token already holds ${present.join(', ')}: it is initialised (keys are never replaced)`);
  const importEc = (label: string, privateKey: Uint8Array) => token.importEcKey(label, privateKey, secp256k1.getPublicKey(privateKey, false));
  if (keys) {
    const seed = mnemonicToSeed(keys.mnemonic);
    const root = HDKey.fromMasterSeed(seed);
    for (const role of ROUTE_ACCOUNT_ROLES) {
      const account = root.derive(roleAccountPath(role));
      if (!account.privateKey || !account.chainCode) throw new Error(`the mnemonic derived no ${role} role key`);
      importEc(TOKEN_LABELS.roleKey(role), account.privateKey);
      token.putData(TOKEN_LABELS.chainCode(role), account.chainCode);
    }
    token.putSecret(TOKEN_LABELS.poolSeed, seed);
    importEc(TOKEN_LABELS.gas, hexToBytes(keys.gasPrivateKey));
    importEc(TOKEN_LABELS.poolRelayer, hexToBytes(keys.poolRelayerPrivateKey));
  } else {
    for (const role of ROUTE_ACCOUNT_ROLES) {
      token.generateEcKey(TOKEN_LABELS.roleKey(role));
      token.putData(TOKEN_LABELS.chainCode(role), randomBytes(32));
    }
    token.putSecret(TOKEN_LABELS.poolSeed);
    token.generateEcKey(TOKEN_LABELS.gas);
    token.generateEcKey(TOKEN_LABELS.poolRelayer);
  }
  return { created: labels };
}
