import { setTimeout as sleep } from 'node:timers/promises';
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import { nextEpochStart } from '../../privacy/exitEpochs.ts';
import { isBrowserKey } from '../../partners/origins.ts';
import { addressBucket, clientAddress } from '../abuseLimits.ts';
import type { ApiDeps } from '../deps.ts';
import { ApiError } from '../errorCodes.ts';
import { headerParameters, routeIdParamsSchema } from '../schemas.ts';
import { failures, newApp, passThrough } from './common.ts';
import { presentedStatusToken, readTransfer, STATUS_TOKEN_SECURITY } from './transfers.ts';
import { statusHistoryUpTo } from '../../transfers/statusHistory.ts';
import { isTerminalStatus } from '../../domain/status.ts';

const DEFAULT_MAX_STREAMS = 10;
/** A partner's backend follows many users' transfers through one key, often from one address. */
const DEFAULT_MAX_STREAMS_PER_KEY = 200;
const DEFAULT_HEARTBEAT_MS = 15_000;
const DEFAULT_PUBLIC_EPOCH_SECONDS = 1800;
/** The reconnection delay the browser's EventSource is told to use. */
const DEFAULT_RETRY_MS = 3_000;

/** The stream's owner for the cap: the partner behind a valid server key, else the client's address (with a browser key's). */
const streamOwner = (c: Context, trustProxyHops: number) => {
  const partner = c.get('partner');
  const address = clientAddress(c, trustProxyHops);
  const ip = `ip:${address === undefined ? 'unknown' : addressBucket(address)}`;
  // A browser key is public: each of its users' addresses has its own place, so no one holding it can fill the key's.
  if (partner !== undefined && isBrowserKey(partner)) return { owner: `key:${partner.id}:${ip}`, perKey: false };
  if (partner !== undefined) return { owner: `key:${partner.id}`, perKey: true };
  return { owner: ip, perKey: false };
};

export function eventRoutes(deps: ApiDeps) {
  const maxStreams = deps.events?.maxStreamsPerClient ?? DEFAULT_MAX_STREAMS;
  const maxStreamsPerKey = deps.events?.maxStreamsPerKey ?? DEFAULT_MAX_STREAMS_PER_KEY;
  const heartbeatMs = deps.events?.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const retryMs = deps.events?.retryMs ?? DEFAULT_RETRY_MS;
  const trustProxyHops = deps.events?.trustProxyHops ?? 0;
  const publicEpochSeconds = deps.events?.publicEpochSeconds ?? DEFAULT_PUBLIC_EPOCH_SECONDS;
  /** Open streams per client on this instance. */
  const open = new Map<string, number>();

  const events = createRoute({
    method: 'get',
    path: '/api/private-route/{routeId}/events',
    operationId: 'transferEvents',
    tags: ['Transfers'],
    summary: 'Follow a transfer (server-sent events)',
    description: [
      'A `text/event-stream` of `event: status` messages whose `data` is exactly what GET /api/private-route/{routeId} answers this caller (full view with the statusToken, public view without).',
      'The first event is the current status, then one per change; the server closes the stream after COMPLETED or FAILED.',
      'Without a statusToken the stream carries the public view, which changes only when an exit epoch begins (docs/privacy.md): it looks again then, and sends what changed.',
      "Event ids are the transfer's status sequence: a reconnecting EventSource sends Last-Event-ID and gets only later changes. A `: heartbeat` comment every 15 s keeps proxies from closing an idle stream.",
      `At most ${DEFAULT_MAX_STREAMS} open streams per client address and API instance, or ${DEFAULT_MAX_STREAMS_PER_KEY} per API key (X-Api-Key) and instance (429 TOO_MANY_STREAMS).`,
    ].join(' '),
    security: STATUS_TOKEN_SECURITY,
    middleware: [deps.abuse?.publicRead ?? passThrough],
    parameters: [headerParameters.apiKey, headerParameters.statusToken, headerParameters.lastEventId],
    request: { params: routeIdParamsSchema },
    responses: {
      200: {
        description: 'The event stream.',
        content: {
          'text/event-stream': {
            schema: z.string().openapi({
              example: 'retry: 3000\nid: 1\nevent: status\ndata: {"routeId":"rt_…","status":"AWAITING_DEPOSIT","error":null,"needsAttention":false}\n\n',
            }),
          },
        },
      },
      401: failures[401](['STATUS_TOKEN_MISMATCH', 'INVALID_API_KEY']),
      404: failures[404](['UNKNOWN_ROUTE', 'UNKNOWN_ENDPOINT']),
      429: failures[429](['TOO_MANY_STREAMS', 'RATE_LIMITED']),
      500: failures[500](),
    },
  });

  return newApp().openapi(events, async (c) => {
    const feed = deps.statusFeed;
    if (!feed) throw new ApiError(404, 'UNKNOWN_ENDPOINT', `no such endpoint: ${c.req.method} ${c.req.path}`);
    const { routeId } = c.req.valid('param');
    // The same access rules as GET, checked before the stream opens so a wrong token is a plain 401.
    await readTransfer(deps, c, routeId);
    const token = presentedStatusToken(c);
    const lastEventId = Number.parseInt(c.req.header('last-event-id') ?? '', 10);
    const afterSeq = Number.isSafeInteger(lastEventId) && lastEventId >= 0 ? lastEventId : -1;

    // A HEAD has no body to stream: answer the headers without holding a stream's place.
    if (c.req.method === 'HEAD') return c.body(null, 200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });

    const { owner, perKey } = streamOwner(c, trustProxyHops);
    const count = open.get(owner) ?? 0;
    const cap = perKey ? maxStreamsPerKey : maxStreams;
    if (count >= cap) {
      throw new ApiError(
        429,
        'TOO_MANY_STREAMS',
        `too many open event streams: at most ${cap} per ${perKey ? 'API key' : 'client address (an API key, X-Api-Key, has a cap of its own)'}; close one first`,
        { 'Retry-After': '5' },
      );
    }
    open.set(owner, count + 1);
    const release = () => {
      const left = (open.get(owner) ?? 1) - 1;
      if (left <= 0) open.delete(owner);
      else open.set(owner, left);
    };

    /**
     * The public view changes only when an exit epoch begins (src/transfers/transferService.ts): read it now, then again
     * at each epoch's start, and send it when its status moved on. Its changes are not announced at the moment they
     * happen, so the stream's timing tells no more than the view does.
     */
    const streamPublicView = async (stream: SSEStreamingApi, signal: AbortSignal) => {
      let lastSeq = afterSeq;
      let first = true;
      while (!signal.aborted) {
        const read = await deps.transfers.read(routeId, undefined);
        if (read?.access !== 'public') return;
        if (read.seq > lastSeq) {
          await stream.writeSSE({ event: 'status', id: String(read.seq), data: JSON.stringify(read.transfer), ...(first ? { retry: retryMs } : {}) });
          first = false;
          lastSeq = read.seq;
        }
        if (isTerminalStatus(read.transfer.status)) return;
        // A moment into the next epoch, so the view read then is the one that epoch shows.
        await sleep(nextEpochStart(Date.now(), publicEpochSeconds) - Date.now() + 50, undefined, { signal }).catch(() => undefined);
      }
    };

    c.header('Vary', 'Authorization, X-Status-Token');
    // Tells nginx-like proxies not to buffer the stream.
    c.header('X-Accel-Buffering', 'no');
    const response = streamSSE(
      c,
      async (stream) => {
        const aborted = new AbortController();
        stream.onAbort(() => aborted.abort());
        const heartbeat = setInterval(() => {
          stream.write(': heartbeat\n\n').catch(() => aborted.abort());
          // A statusToken reissued meanwhile (src/api/routes/partnerTransfers.ts) ends the streams opened with the old one.
          if (token !== undefined) {
            deps.transfers.opensFullView(routeId, token).then(
              (opens) => opens || aborted.abort(),
              () => undefined,
            );
          }
        }, heartbeatMs);
        try {
          if (token === undefined) {
            await streamPublicView(stream, aborted.signal);
            return;
          }
          let first = true;
          for await (const change of feed.changes(routeId, afterSeq, aborted.signal)) {
            if (aborted.signal.aborted) break;
            // What GET answers this caller now (the view it is entitled to), with the status this event announces:
            // a status that lasted a moment is streamed even if the route has moved on by the time it is read.
            const read = await deps.transfers.read(routeId, token);
            if (read?.access !== 'full') break;
            const data = {
              ...read.transfer,
              status: change.status as typeof read.transfer.status,
              statusHistory: statusHistoryUpTo(read.transfer.statusHistory, change.status),
            };
            await stream.writeSSE({ event: 'status', id: String(change.statusSeq), data: JSON.stringify(data), ...(first ? { retry: retryMs } : {}) });
            first = false;
            if (isTerminalStatus(change.status)) break;
          }
        } finally {
          clearInterval(heartbeat);
          aborted.abort();
          release();
        }
      },
      async (error, stream) => {
        deps.logger.error('event stream failed', { routeId, error: error.message, name: error.name });
        await stream.close();
      },
    );
    // streamSSE answers no-cache; the views differ per caller and may be private, so nothing may store them.
    response.headers.set('Cache-Control', 'no-store');
    return response;
  });
}
