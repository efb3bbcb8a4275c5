import type { Address, Hex, LocalAccount } from 'viem';

/**
 * The narrow interface of a privacy pool as the transfer workflow uses it. A Railgun adapter and the
 * devnet stand-in both implement it. Shield and unshield are idempotent per route: calling either again
 * for the same route returns the first result and never moves funds twice.
 */
export interface PrivacyPool {
  readonly chainId: number;
  /** The pool contract, where shielded funds sit. */
  readonly address: Address;
  /** Unspent value of a route's note (0 when unknown or spent). */
  note(commitment: Hex): Promise<bigint>;
  /** Fees in basis points, charged by the pool on the amount going in (shield) and coming out (unshield). */
  fees(): Promise<{ shieldFeeBps: number; unshieldFeeBps: number }>;
  shield(input: { routeId: string; owner: LocalAccount; token: Address; amount: bigint; commitment: Hex }): Promise<ShieldResult>;
  unshield(input: { routeId: string; commitment: Hex; to: Address }): Promise<UnshieldResult>;
}

export interface ShieldResult {
  txHash: Hex;
  /** Value of the note after the shield fee. */
  noteValue: bigint;
}

export interface UnshieldResult {
  txHash: Hex;
  /** What `to` received, after the unshield fee. */
  amount: bigint;
}
