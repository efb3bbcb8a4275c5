import { PrivateRouteError } from '../errors.ts';
import type { PublicTransferView, TransferView } from './types.ts';

/**
 * The API answered with an error envelope (`{ success: false, error, code }`). `code` is the API's machine-readable
 * code (docs/api.md), `status` the HTTP status, `message` the server's `error` text.
 */
export class PrivateRouteApiError extends PrivateRouteError {
  override name = 'PrivateRouteApiError';
  /** The API's error code, e.g. `INVALID_AMOUNT`; `UNKNOWN` when the answer was not the API's envelope (a proxy's page). */
  readonly code: string;
  /** The HTTP status. */
  readonly status: number;
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(options: { code: string; status: number; error: string; retryAfterSeconds?: number }) {
    super(options.error, { details: `HTTP ${options.status} ${options.code}` });
    this.code = options.code;
    this.status = options.status;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The same request may succeed later: a server error, a rate limit, or a create with this key still running. */
  get isRetryable(): boolean {
    return this.status >= 500 || this.status === 429 || this.status === 408 || this.code === 'IDEMPOTENCY_KEY_IN_USE';
  }
}

/** No answer from the API at all (DNS, connection refused or reset, TLS): the request may or may not have arrived. */
export class PrivateRouteNetworkError extends PrivateRouteError {
  override name = 'PrivateRouteNetworkError';
  readonly isRetryable = true;

  constructor(url: string, cause: unknown) {
    super(`could not reach the private-route API at ${url}`, {
      details: cause instanceof Error ? cause.message : String(cause),
      fix: 'check baseUrl and the network, then retry (a create retried with the same idempotency key never opens a second route)',
      cause,
    });
  }
}

/**
 * The transfer ended FAILED: `waitForCompletion` rejects with this, so code after `await waitForCompletion(…)` runs
 * only for a delivered transfer. `reason` is the route's recorded `error`; `transfer` the final view.
 */
export class PrivateRouteFailedError extends PrivateRouteError {
  override name = 'PrivateRouteFailedError';
  readonly routeId: string;
  /** The route's recorded error (masked in the public view, full with the statusToken). */
  readonly reason: string;
  readonly transfer: TransferView | PublicTransferView;

  constructor(transfer: TransferView | PublicTransferView) {
    const reason = transfer.error ?? 'the transfer failed';
    super(`transfer ${transfer.routeId} failed: ${reason}`, {
      fix: "see the route's error; funds that reached the service are refunded or held for an operator (docs/operations.md)",
    });
    this.routeId = transfer.routeId;
    this.reason = reason;
    this.transfer = transfer;
  }
}
