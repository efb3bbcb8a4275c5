import type { Address, Hex } from 'viem';
import type { RouteAccountRole, RouteAccountXpubs } from '../accounts/routeAccounts.ts';
import { relaySenderAt } from '../accounts/relaySenders.ts';

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

/**
 * Which key signs: a route account of a role at an index, the gas account, or one of the pool relayer's sending
 * accounts (index 0, the default, is the relayer itself: src/accounts/relaySenders.ts).
 */
export type SignerAccount = { role: RouteAccountRole; index: number } | { role: 'gas' } | { role: 'poolRelayer'; index?: number };

export interface SignerPublicKeys {
  xpubs: RouteAccountXpubs;
  gasAddress: Address;
  /** The relayer itself: the relay fees' recipient (poolRelayerAddresses[0]). */
  poolRelayerAddress: Address;
  /** Every sending account of the relayer, in index order: they take turns sending withdrawals and mints. */
  poolRelayerAddresses: Address[];
}

export interface NoteSecrets {
  nullifier: bigint;
  secret: bigint;
}

/** The pool's note secrets, asked of the signer (so the adapter never holds the master keys). */
export type NoteSecretsProvider = Pick<Signer, 'depositSecrets' | 'withdrawalSecrets'>;

/** A route's own account (deposit, hub or exit at its index), not one of the service's shared ones. */
export const isRouteAccount = (account: SignerAccount): account is { role: RouteAccountRole; index: number } =>
  account.role === 'deposit' || account.role === 'hub' || account.role === 'exit';

export const describeSignerAccount = (account: SignerAccount) =>
  'index' in account && account.index !== undefined ? `${account.role} account ${account.index}` : `${account.role} account`;

/** The address of `account` among the signer's public keys (route accounts through `routeAddress`). */
export function signerAccountAddress(
  keys: SignerPublicKeys,
  account: SignerAccount,
  routeAddress: (role: RouteAccountRole, index: number) => Address,
): Address {
  if (account.role === 'gas') return keys.gasAddress;
  if (account.role === 'poolRelayer') return relaySenderAt(keys.poolRelayerAddresses, account.index);
  return routeAddress(account.role, account.index);
}
