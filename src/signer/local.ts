import { generateDepositSecrets, generateWithdrawalSecrets, type Hash } from '@0xbow/privacy-pools-core-sdk';
import { secp256k1 } from '@noble/curves/secp256k1';
import { hexToBigInt, type LocalAccount, numberToHex, parseTransaction } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEFAULT_RELAY_SENDERS, relaySenderTweak } from '../accounts/relaySenders.ts';
import { CURVE_ORDER, createRouteKeyring } from '../accounts/routeAccounts.ts';
import type { NoteSecrets, Signer, SignerAccount, SignerPublicKeys } from './signer.ts';

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
    if (account.role === 'poolRelayer') {
      const sender = relaySenders[account.index ?? 0];
      if (!sender) throw new RangeError(`relay sender ${account.index} is not one of this signer's ${relaySenders.length}`);
      return sender;
    }
    return keyring.routeAccount(account.role, account.index);
  };
  const secrets = (pair: { nullifier: bigint; secret: bigint }): NoteSecrets => ({ nullifier: pair.nullifier, secret: pair.secret });

  return {
    publicKeys: async () => structuredClone(publicKeys),
    async signTransaction(account, unsignedTransaction) {
      const transaction = parseTransaction(unsignedTransaction);
      if (transaction.chainId === undefined) throw new Error('the transaction names no chainId: the signer signs only replay-protected transactions');
      return accountOf(account).signTransaction(transaction as Parameters<LocalAccount['signTransaction']>[0]);
    },
    depositSecrets: async (scope, index) => secrets(generateDepositSecrets(masterKeys, scope as Hash, index)),
    withdrawalSecrets: async (label, index) => secrets(generateWithdrawalSecrets(masterKeys, label as Hash, index)),
  };
}
