import type { Address, Hex } from 'viem';
import type { RouteAccountRole, RouteAccountXpubs } from '../accounts/routeAccounts.ts';

/**
 * The only door to the service's keys (the spec's TEE boundary): the worker asks it to sign and to derive
 * pool note secrets; the mnemonic, the two shared private keys and the pool's master keys never leave it.
 * src/signer/local.ts holds them in memory (development, and the signer process); src/signer/remote.ts
 * asks the signer process (src/signer.ts) over HTTP.
 */
export interface Signer {
  publicKeys(): Promise<SignerPublicKeys>;
  /** Signs an unsigned serialized transaction (viem's serializeTransaction) as `account`; returns the signed one. */
  signTransaction(account: SignerAccount, unsignedTransaction: Hex): Promise<Hex>;
  /** A pool deposit's note secrets: (scope, index), as Privacy Pools' generateDepositSecrets. */
  depositSecrets(scope: bigint, index: bigint): Promise<NoteSecrets>;
  /** A withdrawal's change-note secrets: (label, index), as Privacy Pools' generateWithdrawalSecrets. */
  withdrawalSecrets(label: bigint, index: bigint): Promise<NoteSecrets>;
}

/** Which key signs: a route account of a role at an index, the gas account, or the pool relayer. */
export type SignerAccount = { role: RouteAccountRole; index: number } | { role: 'gas' } | { role: 'poolRelayer' };

export interface SignerPublicKeys {
  xpubs: RouteAccountXpubs;
  gasAddress: Address;
  poolRelayerAddress: Address;
}

export interface NoteSecrets {
  nullifier: bigint;
  secret: bigint;
}

/** The pool's note secrets, asked of the signer (so the adapter never holds the master keys). */
export type NoteSecretsProvider = Pick<Signer, 'depositSecrets' | 'withdrawalSecrets'>;

export const describeSignerAccount = (account: SignerAccount) => ('index' in account ? `${account.role} account ${account.index}` : `${account.role} account`);
