import type { Address, Hex, LocalAccount } from 'viem';
import type { CctpChainConfig } from './chains.ts';

/** Fast = attested at confirmed finality (threshold 1000, fee); Standard = at finalized (2000, usually free). */
export type CctpFinality = 'fast' | 'standard';

export interface FeeEstimate {
  /** Expected fee deducted from the burned amount at mint, in USDC units. */
  fee: bigint;
  /** The maxFee the burn allows (fee plus buffer). The recipient gets at least amount − maxFee. */
  maxFee: bigint;
  /** The minFinalityThreshold the burn will carry. */
  finalityThreshold: number;
  /** Iris' minimumFee for that threshold, basis points as an exact decimal string (e.g. "1.3"). */
  minimumFeeBps: string;
}

export interface BurnInput {
  /** Idempotency key (with `step`): approve is sent as `${step}:approve`, the burn as `${step}:burn`. */
  routeId: string;
  step: string;
  srcChainId: number;
  dstChainId: number;
  /** Holds `amount` USDC on the source chain and signs approve + depositForBurn. */
  from: LocalAccount;
  amount: bigint;
  mintRecipient: Address;
  /** From estimateFee; must stay the same across retries of a step. */
  maxFee: bigint;
}

export type AttestationState = 'not_found' | 'pending' | 'complete';

export interface AttestationStatus {
  state: AttestationState;
  /** The attested message (with Circle's nonce) when complete; the message to pass to mint. */
  message?: Hex;
  attestation?: Hex;
  /** Iris' eventNonce, as it sends it. */
  eventNonce?: string;
  /** Why Iris holds the message back (e.g. "insufficient_fee"), when it says. */
  delayReason?: string;
}

export interface MintInput {
  /** Idempotency key of the receiveMessage transaction. */
  routeId: string;
  step: string;
  dstChainId: number;
  message: Hex;
  attestation: Hex;
  /** Pays gas for receiveMessage; the USDC goes to the burn's mintRecipient whoever relays. */
  relayer: LocalAccount | readonly LocalAccount[];
}

export interface MintResult {
  /** The receiveMessage transaction; null when someone else minted and it was not found in the lookback window. */
  txHash: Hex | null;
  /** true when the message's nonce was already used by a transaction this step did not send. */
  alreadyMinted: boolean;
}

/** A burn-and-mint USDC bridge (CCTP v2): the caller moves the funds itself, the bridge only attests. */
export interface BurnAndMintBridge {
  chains(): CctpChainConfig[];
  /** Fee for burning `amount` src→dst at the configured finality, and the maxFee the burn will allow. */
  estimateFee(srcChainId: number, dstChainId: number, amount: bigint): Promise<FeeEstimate>;
  /**
   * approve + depositForBurn through the idempotent TxSender. A retry with the same (routeId, step)
   * never burns twice: it returns the recorded burn (after checking it matches the input).
   */
  burn(input: BurnInput): Promise<{ txHash: Hex }>;
  /** The burn recorded for (routeId, step), if one was ever signed. */
  existingBurn(routeId: string, step: string): Promise<{ txHash: Hex } | null>;
  /** One lookup of the burn's message at Iris, outside the shared poller's budget: for tools and tests. */
  attestation(srcChainId: number, burnTxHash: Hex): Promise<AttestationStatus>;
  /**
   * Waits until Iris has signed the burn's message, through the process's one attestation poller (shared
   * request budget, per-burn backoff, a 429 honoured for every burn). Cancellable with `opts.signal`.
   */
  awaitAttestation(srcChainId: number, burnTxHash: Hex, opts?: AwaitAttestationOptions): Promise<AttestedMessage>;
  /**
   * The attested message, re-attested when its expirationBlock has passed on the destination or is about to (a parked
   * route's burn): Iris is asked to sign it again (POST /v2/reattest) and its renewed message is awaited. `renewed`
   * says it was; the mint of a renewed message is a new transaction (the old one could only revert).
   */
  receivable(
    srcChainId: number,
    dstChainId: number,
    burnTxHash: Hex,
    attested: AttestedMessage,
    opts?: { signal?: AbortSignal },
  ): Promise<AttestedMessage & { renewed: boolean; expirationBlock: bigint }>;
  /** receiveMessage on the destination, skipped when the message's nonce is already used. */
  mint(input: MintInput): Promise<MintResult>;
}

/** What a waiter learns after each lookup of its burn (the activity heartbeats it). */
export interface AttestationProgress {
  /** Iris' last answer; 'unknown' until one arrived. */
  attestation: AttestationState | 'unknown';
  delayReason?: string;
  /** Lookups made for this burn since it was registered. */
  checks: number;
  /** Consecutive failed lookups (Iris unreachable, 5xx, rate limited). */
  transientFailures?: number;
  error?: string;
  /** Set while every lookup is held back by Circle's rate limit. */
  rateLimitedForMs?: number;
  nextCheckInMs: number;
}

export type AttestedMessage = AttestationStatus & { state: 'complete'; message: Hex; attestation: Hex };

export interface AwaitAttestationOptions {
  /** Stops waiting (the activity's cancellation signal): the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  onProgress?: (progress: AttestationProgress) => void;
}
