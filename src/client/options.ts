import type { PublicTransferView, TransferView } from './types.ts';

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
  /**
   * Called once per status seen, in order, with the view the API returned (a status overwritten within about a second
   * may be skipped). An error it throws ends the wait: waitForCompletion rejects with that error, and nothing is retried.
   */
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
