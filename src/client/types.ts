/**
 * What the client sends and receives. The answers are the server's own types (type-only imports: nothing of the
 * server runs in the client); the requests are spelled out so that a caller's editor shows every field.
 */
import type { BridgeChain, BridgeToken } from '../providers/bridge.ts';
import type { Quote, QuotedToken } from '../quote/quoteService.ts';
import type { NewTransfer, PublicTransferView, TransferPage, TransferView } from '../transfers/transferService.ts';
import type { TransferStatus } from '../domain/status.ts';
import type { FailureCode } from '../domain/failureCodes.ts';
import type { Refund } from '../transfers/outcomes.ts';

export type { BridgeToken as Token, FailureCode, NewTransfer, PublicTransferView, Quote, QuotedToken, Refund, TransferPage, TransferStatus, TransferView };

/** A chain as GET /api/bridge/chains lists it: its explorer and native currency null where none is known. */
export type Chain = Omit<BridgeChain, 'explorerUrl' | 'nativeCurrency'> & {
  explorerUrl: string | null;
  nativeCurrency: NonNullable<BridgeChain['nativeCurrency']> | null;
};

/**
 * The amount, exactly one way (docs/api.md, "Amounts"): `amount`, decimal whole source tokens as a string ("12.5"),
 * never a number; or `amountSmallestUnits`, an integer string of the source token's smallest units ("12500000").
 */
export type RequestAmount = { amount: string; amountSmallestUnits?: never } | { amountSmallestUnits: string; amount?: never };

export type QuoteRequest = RequestAmount & {
  sourceChainId: number;
  destChainId: number;
  /** Default USDC, unless tokenAddress is given. A symbol that names two tokens of the chain is refused (AMBIGUOUS_TOKEN). */
  tokenSymbol?: string;
  /** Default: the source token's symbol, unless destTokenAddress is given. */
  destTokenSymbol?: string;
  /** The source token by its contract address (GET /api/bridge/tokens), instead of or with tokenSymbol. */
  tokenAddress?: string;
  /** The destination token by its contract address, instead of or with destTokenSymbol. */
  destTokenAddress?: string;
};

export type CreateRequest = QuoteRequest & {
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
  /**
   * Your own reference for the transfer (e.g. your order id; 1 to 128 printable ASCII characters), with an API key
   * only: unique among the key's transfers (another create with it is refused with EXTERNAL_ID_TAKEN), and found
   * again with `list({ externalId })`.
   */
  externalId?: string;
};

/** Which of the API key's transfers to list, and the page (GET /api/private-route). */
export interface ListRequest {
  status?: TransferStatus;
  externalId?: string;
  /** A transaction into the transfer's deposit address (0x + 64 hex). */
  depositTxHash?: string;
  /** The transfer's deposit address. */
  depositAddress?: string;
  /** The previous page's `nextCursor`; none (or null) for the newest transfers. */
  cursor?: string | null;
  /** Transfers per page, 1 to 100 (default 20). */
  limit?: number;
}

/** A transfer's new statusToken (the previous one no longer opens it). */
export interface ReissuedStatusToken {
  routeId: string;
  statusToken: string;
}

export { TERMINAL_STATUSES } from '../domain/status.ts';
