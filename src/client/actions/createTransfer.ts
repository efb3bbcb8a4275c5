import { type ClientContext, call } from '../context.ts';
import { PrivateRouteApiError, PrivateRouteNetworkError } from '../errors.ts';
import type { CreateOptions } from '../options.ts';
import { backoff, sleep } from '../retry.ts';
import type { CreateRequest, NewTransfer } from '../types.ts';

/**
 * POST /api/private-route under one idempotency key, retried (up to the client's createAttempts) on a network
 * error, a 5xx or a create with this key still in progress, after the server's Retry-After or a backoff.
 */
export async function createTransfer(ctx: ClientContext, request: CreateRequest, createOptions: CreateOptions = {}): Promise<NewTransfer> {
  const { signal } = createOptions;
  const idempotencyKey = createOptions.idempotencyKey ?? randomUuid();
  const url = `${ctx.baseUrl}/api/private-route`;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call<NewTransfer>(
        url,
        () => ctx.api.api['private-route'].$post({ json: request }, { headers: { 'Idempotency-Key': idempotencyKey }, init: { signal } }),
        signal,
      );
    } catch (error) {
      const retryable = error instanceof PrivateRouteNetworkError || (error instanceof PrivateRouteApiError && (error.status >= 500 || isInProgress(error)));
      if (!retryable || attempt >= ctx.createAttempts) throw error;
      const retryAfter = error instanceof PrivateRouteApiError ? error.retryAfterSeconds : undefined;
      await sleep(retryAfter !== undefined ? Math.min(retryAfter * 1000, 30_000) : backoff(attempt), signal);
    }
  }
}

/** A create with this key is still being processed by another request: retry with the same key. */
function isInProgress(error: PrivateRouteApiError): boolean {
  return error.code === 'IDEMPOTENCY_KEY_IN_USE';
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
