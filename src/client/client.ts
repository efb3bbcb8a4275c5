import { hc } from 'hono/client';
import type { Api } from '../api/app.ts';
import type { ApiClient } from './api.ts';
import { PrivateRouteApiError, PrivateRouteFailedError, PrivateRouteNetworkError } from './errors.ts';
import { readEventStream } from './sse.ts';
import type { Chain, CreateRequest, NewTransfer, PublicTransferView, Quote, QuoteRequest, Token, TransferView } from './types.ts';
import { isTerminalStatus } from '../domain/status.ts';

export interface PrivateRouteClientOptions {
  /** Where the API is served, e.g. `https://api.example.com` (paths start with /api/…). */
  baseUrl: string;
  /** A partner key (`prk_…`), sent as `X-Api-Key`: quotes and creates count against the key's limits. */
  apiKey?: string;
  /** A fetch to use instead of the global one (tests, proxies, instrumentation). */
  fetch?: typeof fetch;
  /** How often create tries before giving up on a network error, a 5xx or a 409 in progress (default 4). */
  createAttempts?: number;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

export interface CreateOptions extends RequestOptions {
  /**
   * Identifies this create: the API answers every request with the same key with the same route. Default: a
   * random UUID per `create` call, reused by its own retries. Pass your own (e.g. your order id) to make retries
   * across process restarts safe too.
   */
  idempotencyKey?: string;
}

export interface WaitOptions extends RequestOptions {
  /** The statusToken create returned: the full view; without it the public one (routeId, status, error, needsAttention). */
  statusToken?: string;
  /** Called once per status seen, in order, with the view the API returned (a status overwritten within about a second may be skipped). */
  onStatus?: (transfer: TransferView | PublicTransferView) => void;
  /** Polling period when Server-Sent Events are unavailable (default 3000 ms). */
  pollIntervalMs?: number;
  /**
   * `auto` (default): Server-Sent Events, falling back to polling if the endpoint is missing, the stream keeps
   * failing, or no event arrives within `firstEventTimeoutMs` (a buffering proxy). `poll`: polling only.
   */
  transport?: 'auto' | 'poll';
  /** How long the stream may stay silent after connecting before it is deemed buffered (default 10000 ms). */
  firstEventTimeoutMs?: number;
}

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
}

/** A stream silent this long is replaced: the API sends a heartbeat every 15 s. */
const STREAM_IDLE_MS = 45_000;

/** What the client reads of a response (a fetch Response, or hono/client's typed ClientResponse). */
interface Answer {
  ok: boolean;
  status: number;
  url: string;
  headers: Headers;
  body: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
}

export function createPrivateRouteClient(options: PrivateRouteClientOptions): PrivateRouteClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  // Called through a wrapper: a browser's fetch detached from window throws "Illegal invocation".
  const fetchImpl: typeof fetch = (input, init) => (options.fetch ?? globalThis.fetch)(input, init);
  const api: ApiClient = hc<Api>(baseUrl, {
    fetch: fetchImpl,
    headers: options.apiKey ? { 'X-Api-Key': options.apiKey } : undefined,
  });
  const createAttempts = Math.max(1, options.createAttempts ?? 4);

  /** Sends one request; a failure to get any answer is a PrivateRouteNetworkError (an abort stays the signal's reason). */
  async function send(url: string, request: () => Promise<Answer>, signal: AbortSignal | undefined): Promise<Answer> {
    signal?.throwIfAborted();
    try {
      return await request();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw new PrivateRouteNetworkError(url, error);
    }
  }

  async function call<T>(url: string, request: () => Promise<Answer>, signal: AbortSignal | undefined): Promise<T> {
    const response = await send(url, request, signal);
    return unwrap<T>(response);
  }

  const authHeaders = (statusToken: string | undefined): Record<string, string> =>
    statusToken === undefined ? {} : { Authorization: `Bearer ${statusToken}` };

  async function getView(routeId: string, statusToken: string | undefined, signal: AbortSignal | undefined): Promise<View> {
    const url = `${baseUrl}/api/private-route/${encodeURIComponent(routeId)}`;
    return call<View>(
      url,
      () => api.api['private-route'][':routeId'].$get({ param: { routeId } }, { headers: authHeaders(statusToken), init: { signal } }),
      signal,
    );
  }

  async function create(request: CreateRequest, createOptions: CreateOptions = {}): Promise<NewTransfer> {
    const { signal } = createOptions;
    const idempotencyKey = createOptions.idempotencyKey ?? randomUuid();
    const url = `${baseUrl}/api/private-route`;
    for (let attempt = 1; ; attempt++) {
      try {
        return await call<NewTransfer>(
          url,
          () => api.api['private-route'].$post({ json: request }, { headers: { 'Idempotency-Key': idempotencyKey }, init: { signal } }),
          signal,
        );
      } catch (error) {
        const retryable = error instanceof PrivateRouteNetworkError || (error instanceof PrivateRouteApiError && (error.status >= 500 || isInProgress(error)));
        if (!retryable || attempt >= createAttempts) throw error;
        const retryAfter = error instanceof PrivateRouteApiError ? error.retryAfterSeconds : undefined;
        await sleep(retryAfter !== undefined ? Math.min(retryAfter * 1000, 30_000) : backoff(attempt), signal);
      }
    }
  }

  async function waitForCompletion(routeId: string, waitOptions: WaitOptions = {}): Promise<View> {
    const { statusToken, signal } = waitOptions;
    const pollIntervalMs = waitOptions.pollIntervalMs ?? 3000;
    const firstEventTimeoutMs = waitOptions.firstEventTimeoutMs ?? 10_000;
    signal?.throwIfAborted();

    let lastId: string | undefined;
    let lastStatus: string | undefined;
    /** Reports a view once per status (and once per event id on the stream); true when the transfer is finished. */
    const seen = (view: View, id?: string): boolean => {
      const fresh = id !== undefined ? lastId === undefined || Number(id) > Number(lastId) : view.status !== lastStatus;
      if (fresh && view.status !== lastStatus) waitOptions.onStatus?.(view);
      if (id !== undefined && fresh) lastId = id;
      lastStatus = view.status;
      return isTerminalStatus(view.status);
    };
    const finish = (view: View): View => {
      if (view.status === 'FAILED') throw new PrivateRouteFailedError(view);
      return view;
    };

    if (waitOptions.transport !== 'poll') {
      const streamed = await streamUntilDone();
      if (streamed) return finish(streamed);
    }
    // Polling: a GET every pollIntervalMs; transient failures (network, 5xx, 429) only delay the next one.
    for (let failures = 0; ; ) {
      try {
        const view = await getView(routeId, statusToken, signal);
        failures = 0;
        if (seen(view)) return finish(view);
        await sleep(pollIntervalMs, signal);
      } catch (error) {
        if (!isTransient(error)) throw error;
        failures++;
        const retryAfter = error instanceof PrivateRouteApiError ? error.retryAfterSeconds : undefined;
        await sleep(Math.max(pollIntervalMs, retryAfter !== undefined ? retryAfter * 1000 : backoff(failures)), signal);
      }
    }

    /**
     * Follows the events stream, reconnecting with Last-Event-ID when it drops. Resolves with the final view, or
     * undefined when polling should take over: the endpoint is missing (404/405/501), the answer is not an event
     * stream, no event arrives in time (a buffering proxy), or it failed three times in a row.
     */
    async function streamUntilDone(): Promise<View | undefined> {
      const url = `${baseUrl}/api/private-route/${encodeURIComponent(routeId)}/events`;
      let retryMs = 1000;
      for (let failures = 0; failures < 3; ) {
        const connection = new AbortController();
        const abort = () => connection.abort(signal?.reason);
        signal?.addEventListener('abort', abort, { once: true });
        let final: View | undefined;
        let gotActivity = false;
        let gotEvent = false;
        // Until the first line: a buffering proxy is suspected. After it: a connection silent for longer than
        // three of the server's heartbeats is half-open, and is replaced.
        let watchdog = setTimeout(() => connection.abort(), firstEventTimeoutMs);
        const alive = () => {
          gotActivity = true;
          clearTimeout(watchdog);
          watchdog = setTimeout(() => connection.abort(), STREAM_IDLE_MS);
        };
        try {
          const headers: Record<string, string> = { Accept: 'text/event-stream', ...authHeaders(statusToken) };
          if (lastId !== undefined) headers['Last-Event-ID'] = lastId;
          const response = await send(
            url,
            () => api.api['private-route'][':routeId'].events.$get({ param: { routeId } }, { headers, init: { signal: connection.signal } }),
            connection.signal,
          );
          if ([404, 405, 501].includes(response.status)) {
            await response.body?.cancel();
            return undefined;
          }
          if (!response.ok) await unwrap(response); // throws the API's error
          if (!response.body || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
            await response.body?.cancel();
            return undefined;
          }
          await readEventStream(
            response.body,
            {
              onActivity: alive,
              onRetry: (ms) => {
                retryMs = ms;
              },
              onEvent: (event) => {
                if (event.event !== 'status' && event.event !== 'message') return false;
                gotEvent = true;
                const view = parseView(event.data);
                if (view && seen(view, event.id)) final = view;
                return final !== undefined;
              },
            },
            connection.signal,
          ).catch((error: unknown) => {
            // The connection broke mid-stream (the API restarted, a proxy cut it): fetch rejects the read with a
            // bare TypeError; it is a network failure like any other, and the loop reconnects.
            if (connection.signal.aborted) throw error;
            throw new PrivateRouteNetworkError(url, error);
          });
          if (final) {
            connection.abort();
            return final;
          }
          // The server ended the stream without a final status (a restart, an idle limit): reconnect.
          failures = gotEvent ? 0 : failures + 1;
        } catch (error) {
          if (signal?.aborted) throw signal.reason;
          if (!gotActivity && connection.signal.aborted) return undefined; // nothing arrived in time: buffered
          // Too many open streams for this client: polling costs no stream.
          if (error instanceof PrivateRouteApiError && error.code === 'TOO_MANY_STREAMS') return undefined;
          if (!isTransient(error) && !connection.signal.aborted) throw error;
          failures = gotEvent ? 1 : failures + 1;
        } finally {
          clearTimeout(watchdog);
          signal?.removeEventListener('abort', abort);
        }
        await sleep(retryMs * Math.min(failures || 1, 5), signal);
      }
      return undefined;
    }
  }

  return {
    quote: (request, requestOptions = {}) =>
      call<Quote>(
        `${baseUrl}/api/private-route/quote`,
        () => api.api['private-route'].quote.$post({ json: request }, { init: { signal: requestOptions.signal } }),
        requestOptions.signal,
      ),
    create,
    get: ((routeId: string, statusToken?: string, requestOptions: RequestOptions = {}) =>
      getView(routeId, statusToken, requestOptions.signal)) as PrivateRouteClient['get'],
    chains: (requestOptions = {}) =>
      call<Chain[]>(
        `${baseUrl}/api/bridge/chains`,
        () => api.api.bridge.chains.$get(undefined, { init: { signal: requestOptions.signal } }),
        requestOptions.signal,
      ),
    tokens: (chainId, search, requestOptions = {}) =>
      call<Token[]>(
        `${baseUrl}/api/bridge/tokens`,
        () =>
          api.api.bridge.tokens.$get(
            { query: { chainId: String(chainId), ...(search !== undefined && { search }) } },
            { init: { signal: requestOptions.signal } },
          ),
        requestOptions.signal,
      ),
    waitForCompletion: waitForCompletion as PrivateRouteClient['waitForCompletion'],
  };
}

/** The envelope's `data`, or the envelope's error as a PrivateRouteApiError. */
async function unwrap<T>(response: Answer): Promise<T> {
  // A connection that breaks while the body arrives is a network failure (retryable), not an API error.
  const text = await response.text().catch((error: unknown) => Promise.reject(new PrivateRouteNetworkError(response.url, error)));
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const envelope =
    typeof body === 'object' && body !== null && 'success' in body
      ? (body as { success: unknown; data?: unknown; error?: unknown; code?: unknown })
      : undefined;
  if (response.ok && envelope?.success === true) return envelope.data as T;
  const retryAfter = response.headers.get('retry-after');
  const retryAfterSeconds = retryAfter !== null && /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) : undefined;
  if (envelope && typeof envelope.error === 'string') {
    return Promise.reject(
      new PrivateRouteApiError({
        status: response.status,
        code: typeof envelope.code === 'string' ? envelope.code : 'UNKNOWN',
        error: envelope.error,
        retryAfterSeconds,
      }),
    );
  }
  throw new PrivateRouteApiError({
    status: response.status,
    code: 'UNKNOWN',
    error: `HTTP ${response.status} from ${response.url || 'the API'} without the API's JSON envelope (a proxy or the wrong baseUrl?)`,
    retryAfterSeconds,
  });
}

/** One event's data: the view GET returns (an envelope is unwrapped too); undefined when it is not JSON. */
function parseView(data: string): View | undefined {
  try {
    const parsed = JSON.parse(data) as View | { success: boolean; data: View };
    const view = 'success' in parsed ? parsed.data : parsed;
    return typeof view?.status === 'string' ? view : undefined;
  } catch {
    return undefined;
  }
}

/** A create with this key is still being processed by another request: retry with the same key. */
function isInProgress(error: PrivateRouteApiError): boolean {
  return error.code === 'IDEMPOTENCY_KEY_IN_USE';
}

function isTransient(error: unknown): boolean {
  return error instanceof PrivateRouteNetworkError || (error instanceof PrivateRouteApiError && error.isRetryable);
}

/** 0.5 s, 1 s, 2 s, … up to 8 s, with jitter so that many clients do not retry in step. */
function backoff(attempt: number): number {
  const base = Math.min(500 * 2 ** (attempt - 1), 8000);
  return base / 2 + Math.random() * (base / 2);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** crypto.randomUUID where it exists (Node, secure browser contexts), else a v4 UUID from getRandomValues. */
function randomUuid(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
