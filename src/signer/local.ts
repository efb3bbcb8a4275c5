import { secp256k1 } from '@noble/curves/secp256k1';
import { hexToBigInt, type LocalAccount, numberToHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEFAULT_RELAY_SENDERS, relaySenderAt, relaySenderTweak } from '../accounts/relaySenders.ts';
import { CURVE_ORDER, createRouteKeyring } from '../accounts/routeAccounts.ts';
import type { Signer, SignerAccount, SignerPublicKeys } from './signer.ts';
import { noteSecretsOf, replayProtected } from './signing.ts';

export interface LocalSignerKeys {
  mnemonic: string;
  gasPrivateKey: `0x${string}`;
  poolRelayerPrivateKey: `0x${string}`;
  /** The pool relayer's sending accounts (src/accounts/relaySenders.ts); 3 when not given. */
  relaySenders?: number;
}

/** The keys in this process's memory: the signer process's implementation, and a worker's in development. */
export function createLocalSigner(keys: LocalSignerKeys): Signer {
  const keyring = createRouteKeyring(keys.mnemonic);
  const gas = privateKeyToAccount(keys.gasPrivateKey);
  const relayerKey = hexToBigInt(keys.poolRelayerPrivateKey);
  const relayerPublicKey = secp256k1.getPublicKey(keys.poolRelayerPrivateKey.slice(2), false);
  const relaySenders = Array.from({ length: keys.relaySenders ?? DEFAULT_RELAY_SENDERS }, (_, index) =>
    privateKeyToAccount(numberToHex((relayerKey * relaySenderTweak(relayerPublicKey, index)) % CURVE_ORDER, { size: 32 })),
  );
  const masterKeys = keyring.poolMasterKeys();
  const publicKeys: SignerPublicKeys = {
    xpubs: keyring.xpubs(),
    gasAddress: gas.address,
    poolRelayerAddress: relaySenders[0]!.address,
    poolRelayerAddresses: relaySenders.map((account) => account.address),
  };

  const accountOf = (account: SignerAccount): LocalAccount => {
    if (account.role === 'gas') return gas;
    if (account.role === 'poolRelayer') return relaySenderAt(relaySenders, account.index);
    return keyring.routeAccount(account.role, account.index);
  };
  return {
    publicKeys: async () => structuredClone(publicKeys),
    async signTransaction(account, unsignedTransaction) {
      return accountOf(account).signTransaction(replayProtected(unsignedTransaction) as Parameters<LocalAccount['signTransaction']>[0]);
    },
    ...noteSecretsOf(masterKeys),
  };
}
