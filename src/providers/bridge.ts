import type { Address, Hex } from 'viem';
import { PrivateRouteError } from '../errors.ts';

/**
 * The narrow interface every deposit-address bridge adapter implements.
 * Amounts are bigint in the token's smallest units; USD figures are decimal strings
 * exactly as the provider reports them (never used for amount math except via
 * exact decimal parsing).
 */

export interface BridgeChain {
  chainId: number;
  name: string;
  displayName: string;
  logoUrl?: string;
  vmType?: string;
  /** The chain's block explorer (its transaction pages at `<explorerUrl>/tx/<hash>`), where known. */
  explorerUrl?: string;
  /** The currency its gas is paid in, where known. */
  nativeCurrency?: { symbol: string; decimals: number };
}

export interface BridgeToken {
  chainId: number;
  address: Address;
  symbol: string;
  name: string;
  decimals: number;
  logoUrl?: string;
}

export type TradeType = 'EXACT_INPUT' | 'EXACT_OUTPUT';

export interface BridgeQuoteRequest {
  originChainId: number;
  destinationChainId: number;
  originCurrency: Address;
  destinationCurrency: Address;
  /** EXACT_INPUT: amount of originCurrency; EXACT_OUTPUT: amount of destinationCurrency. */
  amount: bigint;
  tradeType: TradeType;
  /** Account that will send the deposit. */
  user: Address;
  recipient: Address;
  refundTo: Address;
  /**
   * true: ask the provider for a deposit address (a real, executable order).
   * false: a preview price only (no deposit address allocated).
   */
  useDepositAddress: boolean;
}

export interface BridgeQuote {
  /** Provider's id for the order; present when useDepositAddress was true. */
  requestId: string | null;
  /** Address to send exactly amountIn of originCurrency to; present when useDepositAddress was true. */
  depositAddress: Address | null;
  amountIn: bigint;
  /** The expected output. */
  amountOut: bigint;
  /** The least the order delivers (Relay's `minimumAmount`: the expected output less its slippage tolerance); absent: amountOut. */
  minAmountOut?: bigint;
  amountInUsd: string | null;
  amountOutUsd: string | null;
  timeEstimateSeconds: number;
}

export type BridgeOrderState = 'waiting' | 'pending' | 'success' | 'refunded' | 'failed';

export interface BridgeOrderStatus {
  state: BridgeOrderState;
  /** Provider's raw status string (waiting, depositing, pending, submitted, delayed, success, refund, failure). */
  providerStatus: string;
  inTxHashes: Hex[];
  outTxHashes: Hex[];
  /** Destination chain of the fill, when the provider reports it. */
  destinationChainId?: number;
  details?: string;
}

/** The request cannot be served as asked (unsupported pair, amount too small, no liquidity...). Maps to HTTP 400. */
export class BridgeRouteError extends PrivateRouteError {
  override name = 'BridgeRouteError';
}

/**
 * The provider could not be reached or answered with a server error / rate limit. Retryable. `transient`:
 * worth retrying soon within the same call (network, 5xx, 429); false when it needs a person (a refused API key).
 */
export class BridgeUnavailableError extends PrivateRouteError {
  override name = 'BridgeUnavailableError';
  constructor(
    message: string,
    readonly transient = true,
  ) {
    super(message);
  }
}

export interface DepositAddressBridge {
  listChains(): Promise<BridgeChain[]>;
  listTokens(chainId: number, search?: string): Promise<BridgeToken[]>;
  quote(request: BridgeQuoteRequest): Promise<BridgeQuote>;
  orderStatus(requestId: string): Promise<BridgeOrderStatus>;
  /** USD price of one whole token as a decimal string, or null when the provider has none. */
  tokenUsdPrice(chainId: number, address: Address): Promise<string | null>;
}
