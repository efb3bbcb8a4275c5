import { generateDepositSecrets, generateWithdrawalSecrets, type Hash } from '@0xbow/privacy-pools-core-sdk';
import { type LocalAccount, parseTransaction } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createRouteKeyring } from '../accounts/routeAccounts.ts';
import type { NoteSecrets, Signer, SignerAccount, SignerPublicKeys } from './signer.ts';

export interface LocalSignerKeys {
  mnemonic: string;
  gasPrivateKey: `0x${string}`;
  poolRelayerPrivateKey: `0x${string}`;
}

/** The keys in this process's memory: the signer process's implementation, and a worker's in development. */
export function createLocalSigner(keys: LocalSignerKeys): Signer {
  const keyring = createRouteKeyring(keys.mnemonic);
  const gas = privateKeyToAccount(keys.gasPrivateKey);
  const poolRelayer = privateKeyToAccount(keys.poolRelayerPrivateKey);
  const masterKeys = keyring.poolMasterKeys();
  const publicKeys: SignerPublicKeys = { xpubs: keyring.xpubs(), gasAddress: gas.address, poolRelayerAddress: poolRelayer.address };

  const accountOf = (account: SignerAccount): LocalAccount => {
    if (account.role === 'gas') return gas;
    if (account.role === 'poolRelayer') return poolRelayer;
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
