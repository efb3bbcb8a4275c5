import type { Address, Hex, LocalAccount, TransactionReceipt } from 'viem';
import type { Intent } from '../intentStore.ts';

export interface SendRequest {
  /** Idempotency key: one live transaction per (routeId, step); a voided one frees the key. */
  routeId: string;
  step: string;
  chainId: number;
  /**
   * The signer: one account, or several that take turns (a pool of relayers). A new intent goes to the one with the
   * fewest queued transactions (src/chain/sender/pickAccount.ts); a recorded intent keeps the account that signed it.
   */
  account: LocalAccount | readonly LocalAccount[];
  to: Address;
  data?: Hex;
  value?: bigint;
  /**
   * Gas above the estimate, in percent: for calls whose cost grows with state that other transactions may
   * change before this one is mined (a pool insert costs more when the tree gets deeper).
   */
  gasHeadroomPercent?: number;
}

export interface SentTransaction {
  txHash: Hex;
  receipt: TransactionReceipt;
}

/** What the providers need: send a step's transaction once, and look it up. */
export interface TxSender {
  send(request: SendRequest): Promise<SentTransaction>;
  /**
   * The recorded transaction of a step, if one was ever signed (the attempt that mined, once known): its live
   * intent, or a voided one that mined after all. Null: never signed, or voided and never mined.
   */
  intent(routeId: string, step: string): Promise<{ txHash: Hex } | null>;
}

/** What operators and ending routes need: the queues, and voiding intents that can never mine. */
export interface IntentControl {
  /** One intent by id, live or voided. */
  get(id: number): Promise<Intent | null>;
  /** The sender's live intents the chain has not mined yet, in nonce order. */
  queue(chainId: number, from: Address): Promise<Intent[]>;
  /**
   * Voids an intent that can no longer mine: its nonce is used and none of its attempts mined, confirmed over
   * several looks (a lagging or failing node never makes a mined intent look unmined). Refuses otherwise.
   */
  void(id: number, reason: string): Promise<Intent>;
  /**
   * Replaces a pending intent with a 0-value self-send at its nonce (higher fees, recorded first) and waits for
   * it; the original is then voided. `replaced` is false when the original mined first.
   */
  cancel(id: number, account: LocalAccount): Promise<{ replaced: boolean; txHash: Hex }>;
  /**
   * Voids the route's intents that no node has (never broadcast, by several looks at the sender's pending nonce)
   * and that end their sender's queue. A voided intent is never broadcast again; should one reach the chain anyway
   * (a node the RPC did not ask had it), it is found and recorded as mined, never taken for absent.
   */
  voidUnsent(routeId: string, reason: string): Promise<Intent[]>;
}

export interface TxSenderOptions {
  /** How long one call waits for its transaction before it throws TransactionPendingError (the next call waits on). */
  receiptTimeoutMs?: number;
  /** A transaction at the head of its sender's queue that is still unmined after this long is replaced with higher fees. */
  replaceAfterMs?: number;
  pollIntervalMs?: number;
}
