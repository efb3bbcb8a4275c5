/**
 * The typed client of the private-route API: `import { createPrivateRouteClient } from 'private-route/client'`.
 * Runs in browsers and Node 20 alike (fetch, no Node built-ins); docs/client.md.
 */
export { createPrivateRouteClient } from './client.ts';
export type { CreateOptions, PrivateRouteClient, PrivateRouteClientOptions, RequestOptions, WaitOptions } from './client.ts';
export { PrivateRouteApiError, PrivateRouteFailedError, PrivateRouteNetworkError } from './errors.ts';
export type {
  Chain,
  CreateRequest,
  FailureCode,
  ListRequest,
  NewTransfer,
  PublicTransferView,
  Quote,
  QuotedToken,
  QuoteRequest,
  Refund,
  ReissuedStatusToken,
  RequestAmount,
  Token,
  TransferPage,
  TransferStatus,
  TransferView,
} from './types.ts';
export { TERMINAL_STATUSES } from './types.ts';
