import { hc } from 'hono/client';
import type { Api } from '../api/app.ts';
import type { ApiClient } from './api.ts';
import { PrivateRouteApiError, PrivateRouteNetworkError } from './errors.ts';
import type { PrivateRouteClientOptions } from './options.ts';

/**
 * What every action of the client works with, built once per client: the API's base URL, its routes typed by
 * hc<Api> (with the client's fetch and API key), and how often a create tries.
 */
export interface ClientContext {
  baseUrl: string;
  api: ApiClient;
  createAttempts: number;
}

export function clientContext(options: PrivateRouteClientOptions): ClientContext {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  // Called through a wrapper: a browser's fetch detached from window throws "Illegal invocation".
  const fetchImpl: typeof fetch = (input, init) => (options.fetch ?? globalThis.fetch)(input, init);
  const api: ApiClient = hc<Api>(baseUrl, {
    fetch: fetchImpl,
    headers: options.apiKey ? { 'X-Api-Key': options.apiKey } : undefined,
  });
  const createAttempts = Math.max(1, options.createAttempts ?? 4);
  return { baseUrl, api, createAttempts };
}

/** What the client reads of a response (a fetch Response, or hono/client's typed ClientResponse). */
export interface Answer {
  ok: boolean;
  status: number;
  url: string;
  headers: Headers;
  body: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
}

/** Sends one request; a failure to get any answer is a PrivateRouteNetworkError (an abort stays the signal's reason). */
export async function send(url: string, request: () => Promise<Answer>, signal: AbortSignal | undefined): Promise<Answer> {
  signal?.throwIfAborted();
  try {
    return await request();
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new PrivateRouteNetworkError(url, error);
  }
}

export async function call<T>(url: string, request: () => Promise<Answer>, signal: AbortSignal | undefined): Promise<T> {
  const response = await send(url, request, signal);
  return unwrap<T>(response);
}

export const authHeaders = (statusToken: string | undefined): Record<string, string> =>
  statusToken === undefined ? {} : { Authorization: `Bearer ${statusToken}` };

/** The envelope's `data`, or the envelope's error as a PrivateRouteApiError. */
export async function unwrap<T>(response: Answer): Promise<T> {
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
