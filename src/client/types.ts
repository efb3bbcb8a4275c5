/**
 * What the client sends and receives. The answers are the server's own types (type-only imports: nothing of the
 * server runs in the client); the requests are spelled out so that a caller's editor shows every field.
 */
import type { BridgeChain, BridgeToken } from '../providers/bridge.ts';
import type { Quote } from '../quote/quoteService.ts';
import type { NewTransfer, PublicTransferView, TransferView } from '../transfers/transferService.ts';
import type { TransferStatus } from '../domain/status.ts';
import type { FailureCode } from '../domain/failureCodes.ts';
import type { Refund } from '../transfers/outcomes.ts';

export type { BridgeToken as Token, FailureCode, NewTransfer, PublicTransferView, Quote, Refund, TransferStatus, TransferView };

/** A chain as GET /api/bridge/chains lists it: its explorer and native currency null where none is known. */
export type Chain = Omit<BridgeChain, 'explorerUrl' | 'nativeCurrency'> & {
  explorerUrl: string | null;
  nativeCurrency: NonNullable<BridgeChain['nativeCurrency']> | null;
};

export interface QuoteRequest {
  sourceChainId: number;
  destChainId: number;
  /** Decimal amount of source tokens as a string ("12.5"), never a number (docs/api.md). */
  amount: string;
  /** Default USDC. */
  tokenSymbol?: string;
  /** Default: tokenSymbol. */
  destTokenSymbol?: string;
}

export interface CreateRequest extends QuoteRequest {
  /** Who is paid, on the destination chain. */
  userDestinationAddress: string;
  /** Where undeliverable deposits are refunded, on the source chain. */
  refundAddress?: string;
  /** Wait for at least this anonymity set in the privacy pool. */
  minAnonymitySet?: number;
  /** HTTPS URL that receives a signed POST on every status change (verify it with verifyWebhook). */
  webhookUrl?: string;
  /**
   * The `quoteId` of a quote this create takes as it is (same chains, tokens and amount): the route pays that quote's
   * `quotedOutputAmount`, or the create is refused (QUOTE_EXPIRED, QUOTE_MISMATCH) instead of quoting again.
   */
  quoteId?: string;
}

export { TERMINAL_STATUSES } from '../domain/status.ts';
