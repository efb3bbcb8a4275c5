import { authHeaders, type ClientContext, send, unwrap } from '../context.ts';
import { PrivateRouteApiError, PrivateRouteNetworkError } from '../errors.ts';
import { isTransient, sleep } from '../retry.ts';
import { readEventStream } from '../sse.ts';
import type { View } from './getTransfer.ts';
import { OnStatusFailure, type StatusTracker } from './statusTracker.ts';

/** A stream silent this long is replaced: the API sends a heartbeat every 15 s. */
const STREAM_IDLE_MS = 45_000;

export interface StreamTarget {
  routeId: string;
  statusToken: string | undefined;
  /** How long the stream may stay silent after connecting before it is deemed buffered. */
  firstEventTimeoutMs: number;
  signal: AbortSignal | undefined;
}

/**
 * Follows the events stream, reconnecting with Last-Event-ID when it drops. Resolves with the final view, or
 * undefined when polling should take over: the endpoint is missing (404/405/501), the answer is not an event
 * stream, no event arrives in time (a buffering proxy), or it failed three times in a row.
 */
export async function streamUntilDone(ctx: ClientContext, target: StreamTarget, tracker: StatusTracker): Promise<View | undefined> {
  const { routeId, statusToken, firstEventTimeoutMs, signal } = target;
  const url = `${ctx.baseUrl}/api/private-route/${encodeURIComponent(routeId)}/events`;
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
      if (tracker.lastId !== undefined) headers['Last-Event-ID'] = tracker.lastId;
      const body = await openStream(ctx, url, routeId, headers, connection.signal);
      if (!body) return undefined;
      await readEventStream(
        body,
        {
          onActivity: alive,
          onRetry: (ms) => {
            retryMs = ms;
          },
          onEvent: (event) => {
            if (event.event !== 'status' && event.event !== 'message') return false;
            gotEvent = true;
            const view = parseView(event.data);
            if (view && tracker.seen(view, event.id)) final = view;
            return final !== undefined;
          },
        },
        connection.signal,
      ).catch((error: unknown) => {
        // The connection broke mid-stream (the API restarted, a proxy cut it): fetch rejects the read with a
        // bare TypeError; it is a network failure like any other, and the loop reconnects.
        if (connection.signal.aborted || error instanceof OnStatusFailure) throw error;
        throw new PrivateRouteNetworkError(url, error);
      });
      if (final) {
        connection.abort();
        return final;
      }
      // The server ended the stream without a final status (a restart, an idle limit): reconnect.
      failures = gotEvent ? 0 : failures + 1;
    } catch (error) {
      if (error instanceof OnStatusFailure) {
        connection.abort();
        throw error;
      }
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

/**
 * Connects to the events endpoint: the stream's body, or undefined when polling should take over (the endpoint is
 * missing, or the answer is not an event stream). An API error answer is thrown as its PrivateRouteApiError.
 */
async function openStream(
  ctx: ClientContext,
  url: string,
  routeId: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<ReadableStream<Uint8Array> | undefined> {
  const response = await send(url, () => ctx.api.api['private-route'][':routeId'].events.$get({ param: { routeId } }, { headers, init: { signal } }), signal);
  if ([404, 405, 501].includes(response.status)) {
    await response.body?.cancel();
    return undefined;
  }
  if (!response.ok) await unwrap(response); // throws the API's error
  if (!response.body || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await response.body?.cancel();
    return undefined;
  }
  return response.body;
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
