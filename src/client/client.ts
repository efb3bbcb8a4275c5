import { createTransfer } from './actions/createTransfer.ts';
import { getTransfer } from './actions/getTransfer.ts';
import { listChains } from './actions/listChains.ts';
import { listTokens } from './actions/listTokens.ts';
import { allTransfers, listTransfers } from './actions/listTransfers.ts';
import { reissueStatusToken } from './actions/reissueStatusToken.ts';
import { trackingUrl } from './actions/trackingUrl.ts';
import { quote } from './actions/quote.ts';
import { waitForCompletion } from './actions/waitForCompletion.ts';
import { clientContext } from './context.ts';
import type { CreateOptions, PrivateRouteClientOptions, RequestOptions, WaitOptions } from './options.ts';
import type {
  Chain,
  CreateRequest,
  ListRequest,
  NewTransfer,
  PublicTransferView,
  Quote,
  QuoteRequest,
  ReissuedStatusToken,
  Token,
  TransferPage,
  TransferView,
} from './types.ts';

export type { CreateOptions, PrivateRouteClientOptions, RequestOptions, WaitOptions } from './options.ts';

type View = TransferView | PublicTransferView;
type FullWait = WaitOptions & { statusToken: string; onStatus?: (transfer: TransferView) => void };

export interface PrivateRouteClient {
  /** Prices a transfer; nothing is persisted. Re-quote every 15 to 20 s while a quote is displayed. */
  quote(request: QuoteRequest, options?: RequestOptions): Promise<Quote>;
  /** Creates a transfer: send `amount` of the source token to `depositAddress`; keep `routeId` and `statusToken`. */
  create(request: CreateRequest, options?: CreateOptions): Promise<NewTransfer>;
  /** The transfer as the statusToken's holder sees it. */
  get(routeId: string, statusToken: string, options?: RequestOptions): Promise<TransferView>;
  /**
   * The public view: routeId, status, error (masked), needsAttention. Its status moves only as an exit epoch begins,
   * shows the pool phase as BRIDGING_IN, and shows the end only a delay (up to hours) after it: pass the statusToken.
   */
  get(routeId: string, statusToken?: undefined, options?: RequestOptions): Promise<PublicTransferView>;
  chains(options?: RequestOptions): Promise<Chain[]>;
  tokens(chainId: number, search?: string, options?: RequestOptions): Promise<Token[]>;
  /**
   * Resolves with the final view once the transfer is COMPLETED; rejects with PrivateRouteFailedError when it
   * ends FAILED (its `reason` is the route's error), with the signal's reason when aborted, and with
   * PrivateRouteApiError on a non-retryable API answer (unknown route, wrong statusToken). A transfer parked for
   * an operator stays unfinished: bound the wait with `signal` (e.g. `AbortSignal.timeout(…)`). Without the
   * statusToken it follows the public view, which learns of the end up to PUBLIC_STATUS_DELAY_MAX_SECONDS late.
   */
  waitForCompletion(routeId: string, options: FullWait): Promise<TransferView>;
  waitForCompletion(routeId: string, options?: WaitOptions): Promise<View>;
  /**
   * With an API key: one page of the key's own transfers, newest first, full views (never a statusToken); filters
   * find one by `externalId`, `depositTxHash` or `depositAddress`. Another key's transfers are never listed.
   */
  list(request?: ListRequest, options?: RequestOptions): Promise<TransferPage>;
  /** With an API key: every transfer `list` would list with these filters, page after page (`for await … of`). */
  listAll(request?: Omit<ListRequest, 'cursor'>, options?: RequestOptions): AsyncIterable<TransferView>;
  /** With the API key that created the transfer: a new statusToken; the previous one stops working at once. */
  reissueStatusToken(routeId: string, options?: RequestOptions): Promise<ReissuedStatusToken>;
  /** The end user's tracking page, `<baseUrl>/t/<routeId>#<statusToken>` (the token in the fragment, never sent to a server). */
  trackingUrl(routeId: string, statusToken?: string): string;
}

// src/client/context.ts builds what the methods share, once per client (the base URL, hc<Api> over the client's
// fetch and API key, the create attempts); the files of src/client/actions/ are the methods, one each.
export function createPrivateRouteClient(options: PrivateRouteClientOptions): PrivateRouteClient {
  const ctx = clientContext(options);
  return {
    quote: (request, requestOptions) => quote(ctx, request, requestOptions),
    create: (request, createOptions) => createTransfer(ctx, request, createOptions),
    get: ((routeId: string, statusToken?: string, requestOptions: RequestOptions = {}) =>
      getTransfer(ctx, routeId, statusToken, requestOptions.signal)) as PrivateRouteClient['get'],
    chains: (requestOptions) => listChains(ctx, requestOptions),
    tokens: (chainId, search, requestOptions) => listTokens(ctx, chainId, search, requestOptions),
    waitForCompletion: ((routeId: string, waitOptions?: WaitOptions) =>
      waitForCompletion(ctx, routeId, waitOptions)) as PrivateRouteClient['waitForCompletion'],
    list: (request, requestOptions) => listTransfers(ctx, request, requestOptions),
    listAll: (request, requestOptions) => allTransfers(ctx, request, requestOptions),
    reissueStatusToken: (routeId, requestOptions) => reissueStatusToken(ctx, routeId, requestOptions),
    trackingUrl: (routeId, statusToken) => trackingUrl(ctx, routeId, statusToken),
  };
}
