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
  /** The period of the reads (`quiet`, `poll`, and `auto` when Server-Sent Events are unavailable; default 3000 ms). */
  pollIntervalMs?: number;
  /**
   * `quiet` (default): one read every `pollIntervalMs` at a fixed rate, going on after the end for a random time up to
   * `quietAfterEndMs` (in the background, never reported): with the API's padded answers, whoever watches this client's
   * connection sees no moment at which the route moved, paid out above all (docs/privacy.md). Statuses arrive up to one
   * period late. `auto`: Server-Sent Events, each status at once (so its moment shows on the wire), falling back to
   * polling if the endpoint is missing, the stream keeps failing, or no event arrives within `firstEventTimeoutMs` (a
   * buffering proxy). `poll`: polling that stops at the end.
   */
  transport?: 'quiet' | 'auto' | 'poll';
  /** How long, at most, `quiet` reads on after the end (default 600000 ms; the time is drawn uniformly up to it). */
  quietAfterEndMs?: number;
  /** How long the stream may stay silent after connecting before it is deemed buffered (default 10000 ms). */
  firstEventTimeoutMs?: number;
}
