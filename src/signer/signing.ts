import { generateDepositSecrets, generateWithdrawalSecrets, type Hash, type MasterKeys } from '@0xbow/privacy-pools-core-sdk';
import { type Hex, parseTransaction } from 'viem';
import type { NoteSecrets, Signer } from './signer.ts';

/** What every Signer shares, wherever its keys are (local.ts: memory; pkcs11/tokenSigner.ts: a token). */

/** An unsigned serialized transaction, parsed; one without a chain id is refused (it could be replayed on every chain). */
export function replayProtected(unsignedTransaction: Hex) {
  const transaction = parseTransaction(unsignedTransaction);
  if (transaction.chainId === undefined) throw new Error('the transaction names no chainId: the signer signs only replay-protected transactions');
  return transaction;
}

/** The pool's note secrets from its master keys, as Privacy Pools' SDK derives them. */
export function noteSecretsOf(masterKeys: MasterKeys): Pick<Signer, 'depositSecrets' | 'withdrawalSecrets'> {
  const secrets = (pair: { nullifier: bigint; secret: bigint }): NoteSecrets => ({ nullifier: pair.nullifier, secret: pair.secret });
  return {
    depositSecrets: async (scope, index) => secrets(generateDepositSecrets(masterKeys, scope as Hash, index)),
    withdrawalSecrets: async (label, index) => secrets(generateWithdrawalSecrets(masterKeys, label as Hash, index)),
  };
}
